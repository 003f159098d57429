/**
 * A kernel whose ranks are placed on several devices: one FusedSession per device, and the host
 * moving peer-copy chunks between them. Each device submits its phases in order; before a phase it
 * waits (bounded) until the chunks that land in it are on its queue, and right after submitting a
 * phase it starts the transfers of the chunks that phase completed. So the copy of one phase's
 * chunks overlaps the next phases' compute on both devices.
 */
import { placedTransfers, TransferAlignmentError, type ByteRun, type PlacedKernels, type PlacedTransfer } from '@syncopate/backends';
import type { Module } from '@syncopate/ir';
import * as RNEA from 'fp-ts/lib/ReadonlyNonEmptyArray.js';
import { GpuTimeoutError, PeerCopier, type DeviceHandle, type PeerCopierOptions, type RunResult } from '@syncopate/runtime';
import type { RunRecording } from './run-recording.js';
import { FusedSession } from './session.js';
import { UsageError } from './usage-error.js';
import type { TensorData } from './row-major.js';

interface Deferred {
  readonly promise: Promise<void>;
  resolve(): void;
  reject(e: unknown): void;
}

/** A chunk's bytes, the devices it goes between and the ranks it goes between (for errors). */
interface Route extends PlacedTransfer {
  readonly fromRank: number;
  readonly toRank: number;
  /** The destination's phase that waits for it. */
  readonly landsBefore: number;
}

/** Each crossing chunk's runs in whole words; what cannot be moved so is the caller's to change (UsageError). */
function aligned(module: Module, placed: PlacedKernels): Map<number, PlacedTransfer> {
  try {
    return placedTransfers(module, placed);
  } catch (e) {
    if (e instanceof TransferAlignmentError) throw new UsageError(e.message);
    throw e;
  }
}

/** Byte runs sorted, and those that overlap or touch made one (two chunks may carry the same bytes). */
function mergeRuns(runs: readonly ByteRun[]): ByteRun[] {
  const merged: ByteRun[] = [];
  for (const r of [...runs].sort((a, b) => a.offset - b.offset)) {
    const last = merged[merged.length - 1];
    if (last && r.offset <= last.offset + last.bytes) merged[merged.length - 1] = { offset: last.offset, bytes: Math.max(last.bytes, r.offset + r.bytes - last.offset) };
    else merged.push(r);
  }
  return merged;
}

/** Whether two sorted, merged lists of byte runs share a byte. */
function runsOverlap(a: readonly ByteRun[], b: readonly ByteRun[]): boolean {
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    if (a[i]!.offset + a[i]!.bytes <= b[j]!.offset) i++;
    else if (b[j]!.offset + b[j]!.bytes <= a[i]!.offset) j++;
    else return true;
  }
  return false;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  promise.catch(() => undefined); // a transfer nobody waited for must not become an unhandled rejection
  return { promise, resolve, reject };
}

export interface PlacedSessionOptions {
  /** Longest wait on any one GPU promise or transfer (default 30 s). */
  readonly timeoutMs?: number;
  /** Tensors that will be read back. */
  readonly read?: readonly string[];
  /** How the host moves chunks between devices (pieces, ring depth); PeerCopier's defaults otherwise. */
  readonly peerCopy?: Omit<PeerCopierOptions, 'timeoutMs'>;
  /** A copier to use (and leave open) instead of one of the session's own, e.g. shared by sessions timed side by side. */
  readonly copier?: PeerCopier;
}

export class PlacedSession {
  private constructor(
    private readonly placed: PlacedKernels,
    private readonly devices: readonly DeviceHandle[],
    private readonly sessions: readonly FusedSession[],
    private readonly transfers: ReadonlyMap<number, Route>,
    private readonly copier: PeerCopier,
    private readonly ownsCopier: boolean,
    private readonly timeoutMs: number,
  ) {}

  /** `devices[d]` runs `placed.devices[d]`; every device gets every input (the copies of ranks elsewhere are mailboxes). */
  static async open(devices: readonly DeviceHandle[], module: Module, placed: PlacedKernels, inputs: TensorData, options: PlacedSessionOptions = {}): Promise<PlacedSession> {
    return PlacedSession.start(devices, module, placed, options, (device, kernel) => FusedSession.open(device, kernel, inputs, options));
  }

  /** As `open`, but the tensors are the caller's: bind them (`bindTensors`) before each run. */
  static async prepare(devices: readonly DeviceHandle[], module: Module, placed: PlacedKernels, options: PlacedSessionOptions = {}): Promise<PlacedSession> {
    return PlacedSession.start(devices, module, placed, options, (device, kernel) => FusedSession.prepare(device, kernel, options));
  }

  private static async start(
    devices: readonly DeviceHandle[],
    module: Module,
    placed: PlacedKernels,
    options: PlacedSessionOptions,
    session: (device: DeviceHandle, kernel: PlacedKernels['devices'][number]['kernel']) => Promise<FusedSession>,
  ): Promise<PlacedSession> {
    if (devices.length < placed.devices.length) {
      throw new UsageError(`the kernels are placed on ${placed.devices.length} devices, but ${devices.length} were given`);
    }
    const transfers = new Map<number, Route>();
    for (const [i, t] of aligned(module, placed)) {
      const c = module.chunks[i]!;
      const landsBefore = placed.devices[t.to]!.view.phases.findIndex((p) => p.lands.includes(i));
      transfers.set(i, { ...t, fromRank: c.src, toRank: c.dst, landsBefore });
    }
    const sessions: FusedSession[] = [];
    try {
      for (const [d, { kernel }] of placed.devices.entries()) sessions.push(await session(devices[d]!, kernel));
    } catch (e) {
      sessions.forEach((s) => s.destroy());
      throw e;
    }
    const timeoutMs = options.timeoutMs ?? 30_000;
    const copier = options.copier ?? new PeerCopier({ ...options.peerCopy, timeoutMs });
    return new PlacedSession(placed, devices, sessions, transfers, copier, options.copier === undefined, timeoutMs);
  }

  /** The buffers each device's kernel binds from now on: `perDevice[d]` for device d (FusedSession.bindTensors). */
  bindTensors(perDevice: readonly ReadonlyMap<string, GPUBuffer>[]): void {
    this.sessions.forEach((s, d) => s.bindTensors(perDevice[d]!));
  }

  /** Bytes moved between devices per run. */
  get transferBytes(): number {
    return [...this.transfers.values()].reduce((n, t) => n + t.bytes, 0);
  }

  /**
   * One run over all devices; `wallMs` from the first submit until every device is done. With
   * `overlap: false` (a baseline for benchmarks) each device waits for every phase to finish and for
   * its chunks to land before going on, so no transfer runs beside that device's compute.
   * With `record`, the dispatches, transfers and waits for landings go into it (trace.ts draws them),
   * every phase timed on the GPU too where the device has timestamp queries and the recording asks.
   * With `communicationOnly`, the phases that run tiles are not launched (their waits and sends still
   * happen): what is left is the run's communication alone, the chunk moves inside each device and
   * the transfers between them, in the same order (benchmarks time it so).
   */
  async run(options: { readonly overlap?: boolean; readonly record?: RunRecording; readonly communicationOnly?: boolean } = {}): Promise<RunResult> {
    const overlap = options.overlap ?? true;
    const record = options.record;
    const landed = new Map([...this.transfers.keys()].map((c) => [c, deferred()]));
    // Every transfer started (each settles: a failure goes to `fail`).
    const transfers: Promise<void>[] = [];
    let failure: unknown;
    const fail = (e: unknown) => {
      failure ??= e;
      for (const d of landed.values()) d.reject(failure);
    };
    // The chunks a device sends at one moment travel as one transfer per destination, tensor and
    // landing phase: each transfer costs host round trips (a map of the read-back, one of the upload
    // staging, per piece) on the one JS thread, whatever its size; but what one phase waits for
    // should not wait for what a later phase needs. The earliest landing goes first. A plan cut for
    // overlap submits compute beside its transfers (PeerCopierOptions.besideCompute).
    const flow = this.placed.phases?.phasing === 'sequential' ? 'alone' : 'beside-compute';
    // Transfers started, by destination and tensor: one whose bytes overlap an earlier one's (an f16
    // run widened to whole words, aligned-transfers.ts) writes after it, so the later read wins.
    const started: { readonly key: string; readonly runs: readonly ByteRun[]; readonly settled: Promise<void> }[] = [];
    const send = (chunks: readonly number[]): Promise<void>[] => {
      const routes = chunks.map((c) => this.transfers.get(c)!).sort((a, b) => a.landsBefore - b.landsBefore);
      return Object.values(RNEA.groupBy((t: Route) => `${t.to} ${t.tensor} ${t.landsBefore}`)(routes)).map((group) => {
        const { from, to, tensor } = RNEA.head(group);
        const runs = mergeRuns(group.flatMap((t) => t.runs));
        const copy = () =>
          this.copier.copyRuns(
            { device: this.devices[from]!, buffer: this.sessions[from]!.tensorBuffer(tensor) },
            { device: this.devices[to]!, buffer: this.sessions[to]!.tensorBuffer(tensor) },
            runs,
            // Without the tiles' phases after them, a transfer's end is only seen when its bytes are there.
            overlap && !options.communicationOnly ? 'submitted' : 'done',
            record && ((stages) => group.forEach((t) => record.transfers.push({ ...stages, chunk: t.chunk, name: t.name, from, to, bytes: t.bytes, byteRuns: t.runs.length }))),
            `of ${group.map((t) => `chunk ${t.chunk} %${t.name} (rank ${t.fromRank} -> rank ${t.toRank})`).join(', ')}`,
            flow,
          );
        const key = `${to} ${tensor}`;
        const earlier = started.filter((t) => t.key === key && runsOverlap(t.runs, runs)).map((t) => t.settled);
        const transfer = (earlier.length === 0 ? copy() : Promise.all(earlier).then(copy)).then(() => group.forEach((t) => landed.get(t.chunk)!.resolve()), fail);
        started.push({ key, runs, settled: transfer });
        transfers.push(transfer);
        return transfer;
      });
    };
    const start = performance.now();
    const loops = this.placed.devices.map(async ({ view }, d) => {
      const session = this.sessions[d]!;
      const sending = send(view.sendsAtLaunch);
      if (!overlap) await Promise.all(sending);
      const running: Promise<RunResult>[] = [];
      for (const [p, phase] of view.phases.entries()) {
        const waitFrom = performance.now();
        await Promise.all(phase.lands.map((c) => landed.get(c)!.promise));
        if (record && phase.lands.length > 0) record.waits.push({ device: d, phase: p, chunks: phase.lands, startMs: waitFrom, endMs: performance.now() });
        if (!(options.communicationOnly && phase.tiles.some((t) => t.count > 0))) {
          const launched = session.launchPhase(p, { timing: record?.gpuTimestamps ?? false });
          running.push(record ? launched.then((result) => (record.dispatches.push({ device: d, phase: p, result }), result)) : launched);
          if (!overlap) await running[running.length - 1];
        }
        // Let the other devices submit their phases before this one starts its transfers: starting one
        // takes the JS thread for a while (encoding, the read-back's submit and map), and the devices'
        // compute should not wait on it (device 1's first phase went 0.2–0.5 ms after device 0's).
        if (phase.sends.length > 0) await Promise.resolve();
        const sent = send(phase.sends);
        if (!overlap) await Promise.all(sent);
      }
      await Promise.all(running);
    });
    // Every wait inside is bounded; this bounds the whole, should a transfer never start.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const limit = new Promise<void>((_, reject) => (timer = setTimeout(() => reject(new GpuTimeoutError('a run over several devices', 4 * this.timeoutMs)), 4 * this.timeoutMs)));
    try {
      await Promise.race([Promise.all(loops.map((l) => l.catch(fail))), limit]);
      // No transfer outlives the run, failed or not: a host copy on another thread must not be left
      // writing into a mapped range that the caller's clean-up (closing a device) takes away.
      await Promise.race([Promise.all(transfers), limit]);
    } finally {
      clearTimeout(timer);
    }
    if (failure !== undefined) throw failure;
    const wallMs = performance.now() - start;
    for (const s of this.sessions) await s.checkKernelErrors();
    return { wallMs, timing: 'wall-clock' };
  }

  /** A tensor per rank, each rank's copy from the device it ran on. */
  async read(name: string): Promise<Float32Array[]> {
    const perDevice = await Promise.all(this.sessions.map((s) => s.read(name)));
    return this.placed.rankDevice.map((d, r) => perDevice[d]![r]!);
  }

  destroy(): void {
    this.sessions.forEach((s) => s.destroy());
    if (this.ownsCopier) this.copier.destroy();
  }
}
