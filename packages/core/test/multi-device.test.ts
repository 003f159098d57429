import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { planPhases } from '@syncopate/backends';
import { openDevices, PeerCopier, PeerCopyError, type DeviceHandle } from '@syncopate/runtime';
import { slowThenFailingCopy } from '../../runtime/test/fixtures/slow-then-failing-copy.js';
import { compileOrThrow } from '../src/api/compile.js';
import { PlacedSession, runWorkload } from '../src/tools/run.js';
import type { PlacedSessionOptions } from '../src/api/placed-session.js';
import { getWorkload } from '../src/workloads/index.js';
import { type RunOptions } from '../src/tools/run-report.js';
import { RunRecording } from '../src/api/run-recording.js';

// Fresh devices from the software adapter for each test (one requestAdapter each).
let handles: DeviceHandle[];
beforeEach(async () => {
  handles = await openDevices(4, { gpus: [], device: { requiredLimits: 'adapter-max' } });
});
afterEach(() => handles?.forEach((h) => h.close()));

const base = { dtype: 'f32', backend: 'auto', seed: 11, order: 'chunk-arrival' } as const;

describe('ranks on several devices: peer-copy between them, gpu-signal within', () => {
  const cases: (RunOptions & { devices: number })[] = [];
  for (const workload of ['ag-gemm', 'gemm-rs'] as const) {
    cases.push({ ...base, workload, ranks: 2, devices: 2, shape: { m: 64, n: 32, k: 32 } });
    cases.push({ ...base, workload, ranks: 4, devices: 2, shape: { m: 64, n: 32, k: 32 } });
    cases.push({ ...base, workload, ranks: 4, devices: 4, shape: { m: 64, n: 32, k: 32 } });
    cases.push({ ...base, workload, ranks: 3, devices: 3, shape: { m: 100, n: 40, k: 24 } });
    cases.push({ ...base, workload, ranks: 8, devices: 4, shape: { m: 128, n: 32, k: 16 } });
    cases.push({ ...base, workload, ranks: 6, devices: 3, ranksPerDevice: 2, shape: { m: 96, n: 32, k: 24 } });
    // Two ranks per device on four devices leaves the fourth unused: the report counts devices used.
    cases.push({ ...base, workload, ranks: 5, devices: 4, ranksPerDevice: 2, shape: { m: 80, n: 32, k: 16 } });
    cases.push({ ...base, workload, ranks: 4, devices: 2, chunksPerRank: 2, shape: { m: 128, n: 32, k: 32 } });
    cases.push({ ...base, workload, ranks: 4, devices: 2, order: 'row-major', shape: { m: 64, n: 32, k: 32 } });
    // Shards of several tiles: a rank has tiles of its own that run beside the ring's first transfer.
    cases.push({ ...base, workload, ranks: 4, devices: 2, shape: { m: 1024, n: 64, k: 32 } });
  }

  it.each(cases)('$workload ranks=$ranks devices=$devices per-device=$ranksPerDevice chunks=$chunksPerRank order=$order', async (o) => {
    // A cold shader cache on a busy 2-core machine can hold a device's first phase for over 30 s: the
    // wait for its chunks is bounded, but by more than the default.
    const report = await runWorkload({ ...o, handles: handles.slice(0, o.devices), codegen: { spinLimit: 1 << 16 }, timeoutMs: 110_000 });
    expect(report.maxAbsError).toBe(0);
    expect(report.verified).toBe(true);
    expect(report.devices).toBe(Math.ceil(o.ranks / (o.ranksPerDevice ?? Math.ceil(o.ranks / o.devices))));
    expect(report.backend).toBe(o.ranks === o.devices ? 'peer-copy' : 'gpu-signal+peer-copy');
  }, 240_000);

  it('runs every chunk as a phase boundary when the plan forces peer-copy on one device', async () => {
    for (const workload of ['ag-gemm', 'gemm-rs'] as const) {
      const report = await runWorkload({ ...base, workload, ranks: 4, backend: 'peer-copy', shape: { m: 64, n: 32, k: 32 }, handles: handles.slice(0, 1) });
      expect(report.maxAbsError).toBe(0);
      expect(report.backend).toBe('peer-copy');
      expect(report.devices).toBe(1);
    }
  }, 120_000);

  it('refuses gpu-signal forced between devices, naming the chunk and the devices', async () => {
    const run = runWorkload({ ...base, workload: 'ag-gemm', ranks: 2, backend: 'gpu-signal', shape: { m: 64, n: 32, k: 32 }, handles: handles.slice(0, 2) });
    await expect(run).rejects.toThrow(/chunk %c\d+ is forced to gpu-signal, but ranks \d and \d are on devices \d and \d/);
  });

  const agShape = { m: 64, n: 32, k: 32 };
  const agInputs = getWorkload('ag-gemm').inputs({ ranks: 2, shape: agShape, dtype: 'f32' }, base.seed);
  /** ag-gemm, two ranks on two devices, checked as usual; then `use` gets a session of its own on them, destroyed after. */
  const withAgGemmSession = (options: PlacedSessionOptions, use: (session: PlacedSession) => Promise<void>) =>
    runWorkload({
      ...base,
      workload: 'ag-gemm',
      ranks: 2,
      shape: agShape,
      handles: handles.slice(0, 2),
      afterTimedRuns: async (_, { module, placed, devices }) => {
        const session = await PlacedSession.open(devices, module, placed, agInputs, options);
        try {
          await use(session);
        } finally {
          session.destroy();
        }
      },
    });

  it('runs the communication alone: every chunk lands, no tile runs', async () => {
    let gathered: Float32Array[] = [];
    let products: Float32Array[] = [];
    // A session of its own: the timed runs' products are already in the first one's C.
    await withAgGemmSession({ read: ['A', 'C'] }, async (session) => {
      await session.run({ communicationOnly: true });
      gathered = await session.read('A');
      products = await session.read('C');
    });
    // Each rank holds both halves of A, one of them from the other device; C was never computed.
    const half = (agShape.m / 2) * agShape.k;
    for (const a of gathered) {
      expect(a.subarray(0, half)).toEqual(agInputs['A']![0]!.subarray(0, half));
      expect(a.subarray(half)).toEqual(agInputs['A']![1]!.subarray(half));
    }
    expect(products.map((c) => c.some((x) => x !== 0))).toEqual([false, false]);
  }, 120_000);

  it('fails a run whose transfer failed only once the other transfers have settled', async () => {
    // ag-gemm on two devices sends a shard each way at launch. The first host copy takes 200 ms (as on
    // another thread); the second fails at once.
    const { hostCopy, inFlight } = slowThenFailingCopy(200);
    const copier = new PeerCopier({ hostCopy });
    let failed: unknown;
    await withAgGemmSession({ copier }, async (session) => {
      try {
        await session.run();
      } catch (e) {
        failed = e;
        expect(inFlight()).toBe(0);
      }
    });
    expect(failed).toBeInstanceOf(PeerCopyError);
    copier.destroy();
  }, 120_000);

  it('sends the chunks for another device after one cut, as one transfer', async () => {
    const record = new RunRecording(false);
    const report = await runWorkload({
      ...base,
      workload: 'embed-a2a',
      ranks: 4,
      shape: { m: 64, n: 16, k: 256 },
      handles: handles.slice(0, 2),
      afterTimedRuns: async (session) => void (await (session as PlacedSession).run({ record })),
    });
    expect(report.maxAbsError).toBe(0);
    // Ranks 0, 1 on device 0 and 2, 3 on device 1: each device sends 4 chunks (each of its ranks one
    // to each rank over there). The phases cut once for all of them (planPhases groups the chunks for
    // one device), and they leave as one transfer: a device's four chunks share their start.
    for (const from of [0, 1]) {
      const sent = record.transfers.filter((t) => t.from === from);
      expect(sent).toHaveLength(4);
      expect(new Set(sent.map((t) => t.startMs)).size).toBe(1);
    }
  }, 120_000);

  it('sends what lands before different phases as separate transfers, the earliest first', async () => {
    const shape = { m: 512, n: 64, k: 64 };
    const built = getWorkload('a2a-gemm').build({ ranks: 4, shape, dtype: 'f32' });
    const { module } = compileOrThrow(built.kernel, built.plan);
    const plan = planPhases(module, [0, 0, 1, 1]);
    const record = new RunRecording(false);
    const report = await runWorkload({ ...base, workload: 'a2a-gemm', ranks: 4, shape, handles: handles.slice(0, 2), afterTimedRuns: async (session) => void (await (session as PlacedSession).run({ record })) });
    expect(report.maxAbsError).toBe(0);
    // The dispatch all-to-all's tokens for another device are all inputs (sent at launch), but they
    // land before two phases of the destination: each phase's tokens travel on their own, so the
    // first phase's compute does not wait for the second's bytes.
    for (const from of [0, 1]) {
      const atLaunch = record.transfers.filter((t) => t.from === from && plan.comp[t.chunk] === -1);
      const lands = [...new Set(atLaunch.map((t) => plan.land[t.chunk]!))].sort((a, b) => a - b);
      expect(lands.length).toBeGreaterThan(1);
      const startOf = (land: number) => new Set(atLaunch.filter((t) => plan.land[t.chunk] === land).map((t) => t.startMs));
      expect(lands.map((l) => startOf(l).size)).toEqual(lands.map(() => 1));
      const starts = lands.map((l) => [...startOf(l)][0]!);
      expect(starts).toEqual([...starts].sort((a, b) => a - b));
      expect(new Set(starts).size).toBe(lands.length);
    }
  }, 120_000);

  it('moves the transfers of a plan cut for overlap beside compute, those of a sequential plan alone', async () => {
    /** The flow every transfer asked for. */
    class FlowSpy extends PeerCopier {
      readonly asked: string[] = [];
      override copyRuns(...args: Parameters<PeerCopier['copyRuns']>): Promise<void> {
        this.asked.push(args[6] ?? 'alone');
        return super.copyRuns(...args);
      }
    }
    const flowsOf = async (phasing: 'overlap' | 'sequential') => {
      const copier = new FlowSpy();
      const report = await runWorkload({ ...base, workload: 'ag-gemm', ranks: 2, shape: agShape, handles: handles.slice(0, 2), codegen: { phasing }, copier });
      copier.destroy();
      expect(report.maxAbsError).toBe(0);
      return new Set(copier.asked);
    };
    expect(await flowsOf('overlap')).toEqual(new Set(['beside-compute']));
    expect(await flowsOf('sequential')).toEqual(new Set(['alone']));
  }, 120_000);

  it('submits the first phase on every device before any transfer starts', async () => {
    const record = new RunRecording(false);
    await runWorkload({
      ...base,
      workload: 'gemm-rs',
      ranks: 2,
      shape: { m: 64, n: 32, k: 32 },
      handles: handles.slice(0, 2),
      afterTimedRuns: async (session) => void (await (session as PlacedSession).run({ record })),
    });
    // gemm-rs sends each device's partial after its first phase. Starting a transfer holds the JS
    // thread; the other device's compute must not wait behind it.
    const firstSubmits = [0, 1].map((d) => record.dispatches.find((x) => x.device === d && x.phase === 0)!.result.submittedAtMs!);
    const firstTransfer = Math.min(...record.transfers.map((t) => t.startMs));
    expect(record.transfers.length).toBeGreaterThan(0);
    for (const submitted of firstSubmits) expect(submitted).toBeLessThanOrEqual(firstTransfer);
  }, 120_000);
});

describe('phase cuts for chunks that leave a rank', () => {
  const built = getWorkload('embed-a2a').build({ ranks: 4, shape: { m: 64, n: 16, k: 256 }, dtype: 'f32' });
  const sentBy = (module: ReturnType<typeof compileOrThrow>['module'], comp: readonly number[], rank: number) =>
    module.chunks.flatMap((c, i) => (c.src === rank && c.dst !== rank ? [{ dst: c.dst, comp: comp[i]! }] : []));

  it('one cut for all the chunks a rank sends to another device: they leave together', () => {
    const { module } = compileOrThrow(built.kernel, built.plan);
    const plan = planPhases(module, [0, 0, 1, 1]);
    const toDevice1 = sentBy(module, plan.comp, 0).filter((s) => s.dst >= 2);
    expect(toDevice1).toHaveLength(2);
    expect(toDevice1[0]!.comp).toBe(toDevice1[1]!.comp);
  });

  it('a copy nobody on its device reads lands after every tile of that device, so no compute waits for it', () => {
    // a2a-gemm's combine all-to-all: each result row goes back to its token's rank, where nothing reads it.
    const a2a = getWorkload('a2a-gemm').build({ ranks: 4, shape: { m: 512, n: 256, k: 256 }, dtype: 'f32' });
    const { module } = compileOrThrow(a2a.kernel, a2a.plan);
    const rankDevice = [0, 0, 1, 1];
    const plan = planPhases(module, rankDevice);
    const lastTilePhase = [0, 1].map((d) => Math.max(...plan.tilePhase.flatMap((p, r) => (rankDevice[r] === d ? p : []))));
    const combine = module.chunks.flatMap((c, i) => (c.tensor === 'Y' && rankDevice[c.src] !== rankDevice[c.dst] ? [i] : []));
    expect(combine.length).toBeGreaterThan(0);
    for (const c of combine) expect(plan.land[c]).toBeGreaterThan(lastTilePhase[rankDevice[module.chunks[c]!.dst]!]!);
  });

  it.each([
    [4, [0, 0, 1, 1]],
    [8, [0, 0, 1, 1, 2, 2, 3, 3]],
  ])('ag-gemm, %i ranks: the tiles that need nothing from another device run beside the ring\'s first transfer', (ranks, rankDevice) => {
    const ag = getWorkload('ag-gemm').build({ ranks, shape: { m: 256 * ranks, n: 64, k: 32 }, dtype: 'f32' });
    const { module } = compileOrThrow(ag.kernel, ag.plan);
    const plan = planPhases(module, rankDevice);
    // The ring's first link into each device: a shard from another device that the ring forwards on.
    const firstLinks = module.chunks.flatMap((c, i) => (c.step === 0 && rankDevice[c.src] !== rankDevice[c.dst] ? [i] : []));
    expect(firstLinks.length).toBe(rankDevice.length / 2);
    for (const c of firstLinks) {
      const dst = module.chunks[c]!.dst;
      // It lands after phase 0 (before the change, before it: the device idled for the whole transfer),
      // and phase 0 holds the rank's own tiles.
      expect(plan.land[c]).toBe(1);
      expect(plan.tilePhase[dst]!.filter((p) => p === 0).length).toBeGreaterThan(0);
    }
  });

  it('a cut a chunk where peer-copy is forced within one device', () => {
    const forced = { ...built.plan, chunks: built.plan.chunks.map((c) => ({ ...c, backend: 'peer-copy' as const })) };
    const { module } = compileOrThrow(built.kernel, forced);
    const plan = planPhases(module, [0, 0, 0, 0]);
    expect(new Set(sentBy(module, plan.comp, 0).map((s) => s.comp)).size).toBe(3);
  });
});
