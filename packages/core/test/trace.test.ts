import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chunkTransfer } from '@syncopate/backends';
import { openDevices, type DeviceHandle } from '@syncopate/runtime';
import { traceRun, traceSession, type ChromeTrace, type TraceEvent } from '../src/tools/trace.js';
import type { LoweredWorkload } from '../src/tools/run.js';

let handles: DeviceHandle[] = [];
afterEach(() => handles.forEach((h) => h.close()));

const base = { workload: 'ag-gemm', dtype: 'f32', backend: 'auto', seed: 5, order: 'chunk-arrival', timedRuns: 1, codegen: { spinLimit: 1 << 16 } } as const;

/** A traced run, with the lowered kernels it ran, after a round trip through JSON text. */
async function traced(o: Parameters<typeof traceRun>[0]): Promise<{ trace: ChromeTrace; lowered: LoweredWorkload; verified: boolean }> {
  let lowered: LoweredWorkload | undefined;
  const { report, trace } = await traceRun({ ...o, onLowered: (l) => void (lowered = l) });
  return { trace: JSON.parse(JSON.stringify(trace)) as ChromeTrace, lowered: lowered!, verified: report.verified };
}

const spans = (t: ChromeTrace) => t.traceEvents.filter((e) => e.ph === 'X');
const ns = (us: number) => Math.round(us * 1000);
const end = (e: TraceEvent) => ns(e.ts!) + ns(e.dur!);

/** Every X event has a positive duration, and no two on one track overlap. */
function expectWellFormed(t: ChromeTrace): void {
  expect(t.displayTimeUnit).toBe('ms');
  const tracks = new Map<string, TraceEvent[]>();
  for (const e of spans(t)) {
    expect(e.dur, `${e.name} on ${e.pid}/${e.tid}`).toBeGreaterThan(0);
    expect(e.ts).toBeGreaterThanOrEqual(0);
    const key = `${e.pid}/${e.tid}`;
    tracks.set(key, [...(tracks.get(key) ?? []), e]);
  }
  for (const [key, events] of tracks) {
    events.sort((a, b) => a.ts! - b.ts!);
    for (let i = 1; i < events.length; i++) {
      expect(ns(events[i]!.ts!), `${events[i]!.name} overlaps ${events[i - 1]!.name} on ${key}`).toBeGreaterThanOrEqual(end(events[i - 1]!));
    }
  }
  // Every track and process that has events is named.
  const named = new Set(t.traceEvents.filter((e) => e.name === 'thread_name').map((e) => `${e.pid}/${e.tid}`));
  for (const key of tracks.keys()) expect(named).toContain(key);
}

describe('traceRun: a Chrome trace of one run', () => {
  beforeEach(async () => {
    handles = await openDevices(2, { gpus: [], device: { requiredLimits: 'adapter-max' } });
  });

  it('4 ranks on 2 devices: every phase of every device per rank, every transfer, every wait, on one time axis', async () => {
    const { trace, lowered, verified } = await traced({ ...base, ranks: 4, shape: { m: 64, n: 32, k: 32 }, handles });
    expect(verified).toBe(true);
    expectWellFormed(trace);
    expect(trace.metadata.clock).toBe('timestamp-query');
    expect(trace.metadata.devices.map((d) => [d.device, d.ranks, d.clock])).toEqual([
      [0, [0, 1], 'timestamp-query'],
      [1, [2, 3], 'timestamp-query'],
    ]);
    expect(trace.metadata.run?.workload).toBe('ag-gemm');
    const events = spans(trace);
    const { module, placed } = lowered;

    // A dispatch event per phase of every device, on the track of each rank it ran.
    for (const [d, { view }] of placed.devices.entries()) {
      expect(view.phases.length).toBeGreaterThan(1);
      for (const p of view.phases.keys()) {
        for (const rank of view.ranks) {
          const hits = events.filter((e) => e.cat === 'dispatch' && e.pid === d && e.tid === rank && e.args?.['phase'] === p);
          expect(hits, `device ${d} phase ${p} rank ${rank}`).toHaveLength(1);
          expect(hits[0]!.args?.['ranks']).toEqual(view.ranks);
        }
      }
    }
    // Chunks within a device moved inside dispatches: each listed in a dispatch of both its ranks.
    const inside = module.chunks.filter((c) => placed.rankDevice[c.src] === placed.rankDevice[c.dst]);
    expect(inside.length).toBeGreaterThan(0);
    for (const c of inside) {
      for (const rank of [c.src, c.dst]) {
        expect(events.some((e) => e.tid === rank && (e.args?.['chunksInside'] as string[] | undefined)?.includes(`%${c.value.name}`))).toBe(true);
      }
    }

    // One transfer event per chunk between devices, on the destination device, with its bytes.
    const crossing = module.chunks.flatMap((c, i) => (placed.rankDevice[c.src] !== placed.rankDevice[c.dst] ? [i] : []));
    expect(crossing.length).toBeGreaterThan(0);
    const transfers = events.filter((e) => e.cat === 'peer-copy');
    expect(transfers.map((e) => e.args?.['chunk']).sort((a, b) => Number(a) - Number(b))).toEqual(crossing);
    const tensors = placed.devices[0]!.kernel.tensors;
    for (const e of transfers) {
      const c = module.chunks[e.args!['chunk'] as number]!;
      expect(e.pid).toBe(placed.rankDevice[c.dst]);
      expect(e.args?.['bytes']).toBe(chunkTransfer(c, 0, tensors.find((t) => t.name === c.tensor)!).bytes);
      expect(e.args?.['name']).toBe(`%${c.value.name}`);
    }

    // A host wait before every phase that something lands in; the phase's dispatch starts after it.
    for (const [d, { view }] of placed.devices.entries()) {
      for (const [p, phase] of view.phases.entries()) {
        if (phase.lands.length === 0) continue;
        const wait = events.find((e) => e.cat === 'landing wait' && e.pid === d && e.args?.['phase'] === p);
        expect(wait, `wait before phase ${p} of device ${d}`).toBeDefined();
        expect(wait!.args?.['chunks']).toEqual(phase.lands.map((c) => `%${module.chunks[c]!.value.name}`));
        const dispatch = events.find((e) => e.cat === 'dispatch' && e.pid === d && e.args?.['phase'] === p)!;
        expect(ns(dispatch.ts!)).toBeGreaterThanOrEqual(end(wait!));
      }
    }

    // GPU times line up with host times: a transfer's source bytes reached the host only after
    // the source's phase that completed them had ended on the GPU.
    for (const e of transfers) {
      const c = e.args!['chunk'] as number;
      const from = e.args!['fromDevice'] as number;
      const after = placed.phases!.comp[c]!;
      if (after < 0) continue;
      const source = events.find((x) => x.cat === 'dispatch' && x.pid === from && x.args?.['phase'] === after)!;
      const mapped = ns(e.ts!) + Math.round((e.args!['sourceMappedAfterMs'] as number) * 1e6);
      expect(mapped).toBeGreaterThanOrEqual(end(source));
    }
  }, 120_000);

  it('4 ranks on 2 devices, the communication alone: every transfer, no dispatch of a phase that runs tiles', async () => {
    let alone: ChromeTrace | undefined;
    const { trace, lowered } = await traced({
      ...base,
      ranks: 4,
      shape: { m: 64, n: 32, k: 32 },
      handles,
      afterTimedRuns: async (session, subject) => void (alone = await traceSession(session, subject, true, true)),
    });
    expectWellFormed(alone!);
    const events = spans(alone!);
    // The same transfers as the whole run's.
    const transfers = (t: ChromeTrace) => spans(t).filter((e) => e.cat === 'peer-copy').map((e) => e.name).sort();
    expect(transfers(alone!)).toEqual(transfers(trace));
    expect(transfers(alone!).length).toBeGreaterThan(0);
    // Only the phases without tiles were launched.
    const launched = events.filter((e) => e.cat === 'dispatch');
    for (const e of launched) {
      const phase = lowered.placed.devices[e.pid!]!.view.phases[e.args?.['phase'] as number]!;
      expect(phase.tiles.every((t) => t.count === 0)).toBe(true);
    }
    expect(spans(trace).filter((e) => e.cat === 'dispatch').length).toBeGreaterThan(launched.length);
  }, 120_000);

  it('one device: both ranks\' tracks show the dispatch and the gpu-signal chunks inside it; no transfers', async () => {
    const { trace, lowered } = await traced({ ...base, ranks: 2, shape: { m: 64, n: 32, k: 32 }, handles: handles.slice(0, 1) });
    expectWellFormed(trace);
    const events = spans(trace);
    expect(events.filter((e) => e.cat === 'peer-copy' || e.cat === 'landing wait')).toEqual([]);
    const dispatches = events.filter((e) => e.cat === 'dispatch');
    expect(dispatches.map((e) => [e.pid, e.tid, e.name])).toEqual([
      [0, 0, 'phase 0'],
      [0, 1, 'phase 0'],
    ]);
    const names = lowered.module.chunks.map((c) => `%${c.value.name}`);
    // Rank 0 sends one chunk and receives the other; so does rank 1.
    expect(dispatches.map((e) => [...(e.args?.['chunksInside'] as string[])].sort())).toEqual([names, names]);
    expect(dispatches.every((e) => (e.args?.['tiles'] as number) > 0)).toBe(true);
  }, 120_000);
});

describe('traceRun without timestamp queries', () => {
  beforeEach(async () => {
    // Devices without the feature: every dispatch is timed by the host.
    handles = await openDevices(2, { gpus: [], device: { requiredLimits: 'adapter-max', requiredFeatures: [] } });
  });

  it('falls back to host times and says so in the metadata', async () => {
    expect(handles.every((h) => !h.hasTimestamps)).toBe(true);
    const { trace, lowered } = await traced({ ...base, ranks: 4, shape: { m: 64, n: 32, k: 32 }, handles });
    expectWellFormed(trace);
    expect(trace.metadata.clock).toBe('host');
    expect(trace.metadata.devices.every((d) => d.clock === 'host' && d.gpuToHostMs === undefined)).toBe(true);
    expect(trace.metadata.alignment).toMatch(/no timestamp queries/);
    const dispatches = spans(trace).filter((e) => e.cat === 'dispatch');
    const expected = lowered.placed.devices.reduce((n, { view }) => n + view.phases.length * view.ranks.length, 0);
    expect(dispatches).toHaveLength(expected);
    expect(dispatches.every((e) => e.args?.['clock'] === 'host')).toBe(true);
  }, 120_000);
});
