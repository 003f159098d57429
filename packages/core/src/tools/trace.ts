/**
 * The timeline of one run as a Chrome trace (the Trace Event Format that Perfetto and
 * chrome://tracing open): a process per device; in it a track per rank, showing each dispatch
 * (phase) the device ran for it, a track for the host's waits for chunks to land before a phase,
 * and tracks for the peer-copy transfers arriving at the device (as many as overlap: events of one
 * track must not overlap).
 *
 * GPU and host times go on one axis, the host's `performance.now()`. A device's timestamps count on
 * its own clock, which has an unknown offset from the host's (and one per device). Every dispatch
 * was submitted at a known host time S and reported done at D, and the GPU ran it inside [S, D]; so
 * the true offset is at least S − begin for every dispatch of the device. The trace takes the
 * largest of these lower bounds, which assumes that the dispatch that started soonest after its
 * submit started at once: its error is that dispatch's launch latency (microseconds when the device
 * was idle), and it never puts a dispatch before its submit. Without timestamp queries a dispatch is
 * drawn from its submit (or the end of the device's previous dispatch, whichever is later) to the
 * host seeing it done, and the metadata says so.
 *
 * WGSL has no clock: inside one fused dispatch the tiles of each rank and the chunks that move
 * through gpu-signal cannot be timed. The trace shows the dispatch on each rank's track, with the
 * chunks that moved inside it in its args.
 */
import type { PlacedKernels } from '@syncopate/backends';
import type { Module } from '@syncopate/ir';
import type { DeviceHandle } from '@syncopate/runtime';
import { runWorkload, type RunWorkloadOptions } from './run.js';
import { RunRecording, type DispatchRecord } from '../api/run-recording.js';
import { FusedSession } from '../api/session.js';
import type { PlacedSession } from '../api/placed-session.js';
import type { RunReport } from './run-report.js';
import { UsageError } from '../api/usage-error.js';

/** One event: `X` a span on a track (times in microseconds), `M` a name or order of a process or track. */
export interface TraceEvent {
  readonly name: string;
  readonly cat?: string;
  readonly ph: 'X' | 'M';
  readonly ts?: number;
  readonly dur?: number;
  readonly pid: number;
  readonly tid?: number;
  readonly args?: Readonly<Record<string, unknown>>;
}

export type TraceClock = 'timestamp-query' | 'host';

export interface TraceDevice {
  readonly device: number;
  readonly adapter: string;
  readonly ranks: readonly number[];
  /** Where its dispatches' times come from. */
  readonly clock: TraceClock;
  /** Host time minus device time (ms), with `timestamp-query`. */
  readonly gpuToHostMs?: number;
}

export interface TraceMetadata {
  /** `host` when some device had no timestamp queries, and its dispatches are host times. */
  readonly clock: TraceClock;
  readonly devices: readonly TraceDevice[];
  /** How GPU times were put on the host's axis. */
  readonly alignment: string;
  /** What cannot be seen inside a fused dispatch. */
  readonly insideDispatch: string;
  /** The run's report, with `traceRun`. */
  readonly run?: RunReport;
}

export interface ChromeTrace {
  readonly traceEvents: TraceEvent[];
  readonly displayTimeUnit: 'ms';
  readonly metadata: TraceMetadata;
}

/** What was run: the lowered module, its placement, and the devices in placement order. */
export interface TraceSubject {
  readonly module: Module;
  readonly placed: PlacedKernels;
  /** Every device of the run (a run over processes, whose other devices are undefined here, cannot be traced yet). */
  readonly devices: readonly (DeviceHandle | undefined)[];
}

/** Track ids in a device's process: ranks use their rank number; these stay clear of them. */
const HOST_TRACK = 100_000;
const TRANSFER_TRACK = 200_000;

const ALIGNMENT =
  'GPU timestamps (per device) plus the largest (submit time - GPU begin) over the device\'s dispatches: ' +
  'the least offset that puts no dispatch before its submit';
const ALIGNMENT_HOST = 'host clock (no timestamp queries on some device, or none asked for): its dispatches span from submit (or its previous dispatch\'s end) to the host seeing them done';
const INSIDE_DISPATCH =
  'WGSL has no clock: inside a fused dispatch the tiles of each rank and the gpu-signal chunks cannot be timed; ' +
  'each dispatch is shown on the track of every rank it ran, with the chunks that moved inside it in args';

/**
 * One more run of an open session, recorded and drawn; `gpuTimestamps: false` records the host's clock
 * alone (RunRecording). Over several devices, `communicationOnly` records the run's communication
 * alone, as benchmarks time it (PlacedSession.run).
 */
export async function traceSession(session: FusedSession | PlacedSession, subject: TraceSubject, gpuTimestamps = true, communicationOnly = false): Promise<ChromeTrace> {
  if (subject.devices.some((d) => d === undefined)) throw new UsageError('a run over several processes cannot be traced yet: trace it in one process (without mpirun)');
  const record = new RunRecording(gpuTimestamps);
  if (session instanceof FusedSession) await session.runRecorded(record);
  else await session.run({ record, communicationOnly });
  return buildTrace(record, subject);
}

/**
 * `runWorkload`, and after its timed runs one more run traced: the report and the trace (its
 * metadata carries the report). The checked and timed runs are not traced, so tracing (a query set
 * per dispatch) does not change their figures.
 */
export async function traceRun(o: RunWorkloadOptions, gpuTimestamps = true): Promise<{ report: RunReport; trace: ChromeTrace }> {
  let trace: ChromeTrace | undefined;
  const report = await runWorkload({
    ...o,
    afterTimedRuns: async (session, lowered) => {
      await o.afterTimedRuns?.(session, lowered);
      trace = await traceSession(session, lowered, gpuTimestamps);
    },
  });
  if (trace === undefined) throw new Error('traceRun: the run ended without reaching its traced run');
  return { report, trace: { ...trace, metadata: { ...trace.metadata, run: report } } };
}

interface Span {
  readonly beginMs: number;
  readonly endMs: number;
}

/** Each dispatch of one device on the host's axis (see the top of this file), and how it was placed there. */
function placeDispatches(dispatches: readonly DispatchRecord[]): { spans: Map<number, Span>; clock: TraceClock; gpuToHostMs?: number } {
  const byPhase = [...dispatches].sort((a, b) => a.phase - b.phase);
  const timed = byPhase.every((d) => d.result.gpuSpans?.[0] !== undefined && d.result.submittedAtMs !== undefined);
  const spans = new Map<number, Span>();
  if (timed && byPhase.length > 0) {
    const offset = Math.max(...byPhase.map((d) => d.result.submittedAtMs! - d.result.gpuSpans![0]!.beginMs));
    for (const d of byPhase) spans.set(d.phase, { beginMs: d.result.gpuSpans![0]!.beginMs + offset, endMs: d.result.gpuSpans![0]!.endMs + offset });
    return { spans, clock: 'timestamp-query', gpuToHostMs: roundUs(offset) };
  }
  let previousEnd = -Infinity;
  for (const d of byPhase) {
    const submitted = d.result.submittedAtMs ?? 0;
    const done = d.result.doneAtMs ?? submitted + d.result.wallMs;
    const beginMs = Math.max(submitted, previousEnd);
    const endMs = Math.max(done, beginMs);
    spans.set(d.phase, { beginMs, endMs });
    previousEnd = endMs;
  }
  return { spans, clock: 'host' };
}

function adapterName(device: DeviceHandle | undefined): string {
  const info = device?.adapterInfo;
  return [info?.vendor, info?.device || info?.description].filter(Boolean).join(' ') || 'unknown adapter';
}

/** Milliseconds to the microsecond. */
const roundUs = (ms: number) => Math.round(ms * 1000) / 1000;

/** Greedy lanes: each span goes on the first lane whose last span has ended. */
function lanes(spans: readonly Span[]): number[] {
  const ends: number[] = [];
  return spans.map((s) => {
    let lane = ends.findIndex((end) => end <= s.beginMs);
    if (lane < 0) lane = ends.push(s.endMs) - 1;
    else ends[lane] = s.endMs;
    return lane;
  });
}

/** The Chrome trace of a recorded run. Pure: the GPU is not needed. */
export function buildTrace(record: RunRecording, subject: TraceSubject): ChromeTrace {
  const { module, placed } = subject;
  const chunks = module.chunks;
  const events: TraceEvent[] = [];
  const devices: TraceDevice[] = [];
  const placedPerDevice = placed.devices.map((_, d) => placeDispatches(record.dispatches.filter((x) => x.device === d)));
  const hostTimes = [
    ...placedPerDevice.flatMap((p) => [...p.spans.values()].map((s) => s.beginMs)),
    ...record.dispatches.map((d) => d.result.submittedAtMs ?? Infinity),
    ...record.transfers.map((t) => t.startMs),
    ...record.waits.map((w) => w.startMs),
  ];
  const origin = Math.min(...hostTimes);
  // Whole nanoseconds, so that a span's end and the next one's start compare exactly.
  const ns = (ms: number) => Math.round((ms - origin) * 1e6);
  const span = (s: Span) => ({ ts: ns(s.beginMs) / 1000, dur: (ns(s.endMs) - ns(s.beginMs)) / 1000 });
  const name = (c: number) => `%${chunks[c]!.value.name}`;
  const crosses = (c: number) => placed.rankDevice[chunks[c]!.src] !== placed.rankDevice[chunks[c]!.dst];
  const publishedIn = (c: number) => placed.phases?.pub[c] ?? 0;

  placed.devices.forEach(({ view, kernel }, d) => {
    const { spans, clock, gpuToHostMs } = placedPerDevice[d]!;
    devices.push({ device: d, adapter: adapterName(subject.devices[d]), ranks: view.ranks, clock, ...(gpuToHostMs === undefined ? {} : { gpuToHostMs }) });
    events.push({ name: 'process_name', ph: 'M', pid: d, args: { name: `device ${d}: ${adapterName(subject.devices[d])}` } });
    events.push({ name: 'process_sort_index', ph: 'M', pid: d, args: { sort_index: d } });
    view.ranks.forEach((rank, i) => {
      events.push({ name: 'thread_name', ph: 'M', pid: d, tid: rank, args: { name: `rank ${rank}` } });
      events.push({ name: 'thread_sort_index', ph: 'M', pid: d, tid: rank, args: { sort_index: i } });
      view.phases.forEach((phase, p) => {
        const at = spans.get(p);
        if (at === undefined) return;
        const [x, y] = kernel.phases[p]!;
        const mine = (c: number) => chunks[c]!.src === rank || chunks[c]!.dst === rank;
        events.push({
          name: `phase ${p}`,
          cat: 'dispatch',
          ph: 'X',
          ...span(at),
          pid: d,
          tid: rank,
          args: {
            device: d,
            phase: p,
            ranks: view.ranks,
            tiles: phase.tiles[i]!.count,
            workgroups: x * y,
            clock,
            chunksInside: chunks.flatMap((_, c) => (!crosses(c) && mine(c) && publishedIn(c) === p ? [name(c)] : [])),
            landedBefore: phase.lands.filter((c) => chunks[c]!.dst === rank).map(name),
            sentAfter: phase.sends.filter((c) => chunks[c]!.src === rank).map(name),
          },
        });
      });
    });
    const waits = record.waits.filter((w) => w.device === d);
    if (waits.length > 0) {
      events.push({ name: 'thread_name', ph: 'M', pid: d, tid: HOST_TRACK, args: { name: 'host: waits for landings' } });
      events.push({ name: 'thread_sort_index', ph: 'M', pid: d, tid: HOST_TRACK, args: { sort_index: view.ranks.length } });
    }
    for (const w of waits) {
      events.push({
        name: `wait before phase ${w.phase}`,
        cat: 'landing wait',
        ph: 'X',
        ...span({ beginMs: w.startMs, endMs: w.endMs }),
        pid: d,
        tid: HOST_TRACK,
        args: { phase: w.phase, chunks: w.chunks.map(name) },
      });
    }
    const incoming = record.transfers.filter((t) => t.to === d).sort((a, b) => a.startMs - b.startMs);
    const transferSpans = incoming.map((t) => ({ beginMs: t.startMs, endMs: t.doneMs ?? t.submittedMs }));
    const lane = lanes(transferSpans);
    for (let l = 0; l <= Math.max(-1, ...lane); l++) {
      events.push({ name: 'thread_name', ph: 'M', pid: d, tid: TRANSFER_TRACK + l, args: { name: l === 0 ? 'transfers in' : `transfers in (${l + 1})` } });
      events.push({ name: 'thread_sort_index', ph: 'M', pid: d, tid: TRANSFER_TRACK + l, args: { sort_index: view.ranks.length + 1 + l } });
    }
    incoming.forEach((t, i) => {
      const c = chunks[t.chunk]!;
      events.push({
        name: `%${t.name}`,
        cat: 'peer-copy',
        ph: 'X',
        ...span(transferSpans[i]!),
        pid: d,
        tid: TRANSFER_TRACK + lane[i]!,
        args: {
          chunk: t.chunk,
          name: `%${t.name}`,
          fromDevice: t.from,
          toDevice: t.to,
          fromRank: c.src,
          toRank: c.dst,
          bytes: t.bytes,
          byteRuns: t.byteRuns,
          // Until the source's bytes were on the host (it waits behind the source's queued work),
          // then until the copy into place was submitted on this device.
          sourceMappedAfterMs: roundUs(t.sourceMappedMs - t.startMs),
          submittedAfterMs: roundUs(t.submittedMs - t.startMs),
          // Each piece's steps, ms after the transfer's start: where one stalls.
          pieces: t.pieces.map((p) => [p.startMs, p.readMappedMs, p.stagingReadyMs, p.copiedMs, p.submittedMs].map((ms) => roundUs(ms - t.startMs))),
          pieceSteps: 'started, read-back mapped, upload staging mapped, host copy done, upload submitted',
          ends: t.doneMs === undefined ? 'copy into place submitted' : 'copy into place done',
        },
      });
    });
  });
  const clock: TraceClock = devices.every((d) => d.clock === 'timestamp-query') ? 'timestamp-query' : 'host';
  return {
    traceEvents: events,
    displayTimeUnit: 'ms',
    metadata: { clock, devices, alignment: clock === 'host' ? ALIGNMENT_HOST : ALIGNMENT, insideDispatch: INSIDE_DISPATCH },
  };
}
