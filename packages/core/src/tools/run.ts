/**
 * Compile, lower, run and check: a workload end to end. The kernel is compiled with the Syncopate
 * passes, its ranks placed on one or more devices, lowered to one fused WGSL kernel per device
 * (gpu-signal between ranks of a device, peer-copy through the host between devices), run, and its
 * outputs checked against the workload's CPU reference.
 */
import * as E from 'fp-ts/lib/Either.js';
import { emitPlacedKernels, type CodegenOptions, type DeviceView, type PlacedKernels } from '@syncopate/backends';
import { hasRobustness, placeRanks, type DeviceHandle, type RunResult } from '@syncopate/runtime';
import { compileOrThrow, type CompiledKernel } from '../api/compile.js';
import { devicesOf, openRunDevices } from '../api/run-devices.js';
import { CompileError } from '../api/compile-error.js';
import { PlacedSession, type PlacedSessionOptions } from '../api/placed-session.js';
import { placeProcesses, type RankProcesses } from '../api/processes.js';
import { FusedSession } from '../api/session.js';
import { processLayout, slowestPerRun, worstOver } from './process-report.js';
import { matmulTargetFor } from './matmul-target.js';
import { summarize, warmUntilSettled } from './stats.js';
import type { Box, Module } from '@syncopate/ir';
import { getWorkload, maxAbsError, regionBoxes, UsageError, type BlockShape, type RowSample, type TensorData, type WorkloadOptions } from '../workloads/index.js';
import { type RunOptions, type RunReport } from './run-report.js';

export type { RunOptions, RunReport } from './run-report.js';
export { ChunkTimeoutError, FusedSession, type FusedRun } from '../api/session.js';
export { PlacedSession, type PlacedSessionOptions } from '../api/placed-session.js';
export { emitWgsl, lowerToWgsl, openDevice, runFused } from '../api/fused.js';

/** The adapter a run used, as reports and the tune cache name it: `NVIDIA H100 ... (x2)` for two devices. */
export function adapterLabel(device: DeviceHandle, devices = 1): string {
  return describeAdapter(device) + (devices > 1 ? ` (x${devices})` : '');
}

function describeAdapter(device: DeviceHandle): string {
  const info = device.adapterInfo;
  return [info.vendor, info.device || info.description, info.architecture].filter(Boolean).join(' ') || 'unknown adapter';
}

export interface RunWorkloadOptions extends RunOptions {
  /** A device to run on (kept open); default: open one and close it afterwards. */
  readonly device?: DeviceHandle;
  /**
   * Devices to run on (kept open), device i for the ranks `placeRanks` puts on i; default: open them.
   * Under an MPI job (`processes`), this process's at their indices (`openRunDevices`), undefined elsewhere.
   */
  readonly handles?: readonly (DeviceHandle | undefined)[];
  /** Longest wait on any GPU promise or transfer (default 30 s). */
  readonly timeoutMs?: number;
  /** How chunks between devices move through the host (PlacedSessionOptions.peerCopy). */
  readonly peerCopy?: PlacedSessionOptions['peerCopy'];
  /** A host copier to share, left open (PlacedSessionOptions.copier); default: the session's own. */
  readonly copier?: PlacedSessionOptions['copier'];
  readonly codegen?: CodegenOptions;
  /** Runs timed after the checked one and the warm-up (default 3); `fusedMs` is their median. */
  readonly timedRuns?: number;
  /** Untimed runs before the timed ones (default 0). */
  readonly warmupRuns?: number;
  /** GPU time to keep the device busy before the settled check (`warmUntilSettled`); GPU benchmarks pass WARMUP_BUSY_MS. Default 0. */
  readonly warmupBusyMs?: number;
  /**
   * Check the outputs against the CPU reference (default true). Benchmarks at shapes whose reference
   * would take minutes turn it off (and check a smaller shape first): `verified` is then false and
   * `maxAbsError` NaN.
   */
  readonly verify?: boolean;
  /**
   * After the timed runs, this many runs more, phase by phase, each phase timed on its own (GPU
   * timestamps, one device only): `commMs` sums the phases that run no tiles. Of a sequential run
   * (bench.ts) that is its communication, timed alone. Skipped where the device has no timestamps; over
   * several devices, bench.ts times PlacedSession.run's `communicationOnly` instead.
   */
  readonly timeCommunication?: number;
  /**
   * Compile the kernel without its plan: every rank computes its tiles on the data it holds and no
   * chunk moves. The compute of the workload measured alone (`benchWorkload`'s compute-only figure);
   * the outputs are not the workload's answer, so nothing is verified.
   */
  readonly withoutTransfers?: boolean;
  /** Called once the kernels are lowered and placed, before any device is opened (e.g. to write them out). */
  readonly onLowered?: (lowered: LoweredWorkload) => void | Promise<void>;
  /** Called after the timed runs, the session still open: e.g. to trace one more run (`traceRun`). Devices of other processes are undefined. */
  readonly afterTimedRuns?: (session: FusedSession | PlacedSession, lowered: LoweredWorkload & { readonly devices: readonly (DeviceHandle | undefined)[] }) => Promise<void>;
  /**
   * The MPI job this process is one of (runtime's `joinProcessGroup`): every process calls
   * runWorkload with the same options, opens its block of the devices (`devices` counts them all)
   * and runs their ranks; the report's error and times are over every process.
   */
  readonly processes?: RankProcesses;
}

/** A workload's compiled module and its kernels as placed on devices. */
export interface LoweredWorkload {
  readonly module: CompiledKernel['module'];
  readonly placed: PlacedKernels;
}

/** Each rank's device. */
function rankPlacement(o: RunWorkloadOptions): number[] {
  try {
    return placeRanks(o.ranks, devicesOf(o), o.ranksPerDevice);
  } catch (e) {
    throw new UsageError((e as Error).message.replace(/^placeRanks: /, ''));
  }
}

/** The devices the workload's ranks are placed on, and how its chunks travel between them. */
function placeWorkload(o: RunWorkloadOptions, module: CompiledKernel['module']): PlacedKernels {
  const rankDevice = rankPlacement(o);
  let placed: ReturnType<typeof emitPlacedKernels>;
  try {
    // RunOptions.phasing where the codegen options name none
    const codegen = o.phasing === undefined || o.codegen?.phasing !== undefined ? o.codegen : { ...o.codegen, phasing: o.phasing };
    placed = emitPlacedKernels(module, rankDevice, codegen);
  } catch (e) {
    if (e instanceof RangeError && !/call stack/.test(e.message)) throw new UsageError(e.message);
    throw e;
  }
  if (E.isLeft(placed)) throw new CompileError(placed.left);
  return placed.right;
}

/**
 * The kernels again with subgroup matrices where `o.target` (default auto) asks for them and the
 * device has them (matmul-target.ts), built with the workload's tensor-core tile where it has one and
 * `o.block` is not given (`rebuild`). Under auto a kernel the path cannot lower (a K tile that is not
 * a multiple of the matrices', say) stays SIMT; named, the CompileError stands.
 */
function retarget(
  o: RunWorkloadOptions,
  built: BuiltWorkload,
  placed: PlacedKernels,
  device: DeviceHandle,
  rebuild: (block: BlockShape) => BuiltWorkload,
): { built: BuiltWorkload; placed: PlacedKernels; target: 'simt' | 'subgroup-matrix' } {
  const target = matmulTargetFor(o.target ?? 'auto', device, o.dtype);
  if (target === 'simt') return { built, placed, target: 'simt' };
  const lower = (b: BuiltWorkload) => ({ built: b, placed: placeWorkload({ ...o, codegen: { ...o.codegen, target } }, b.compiled.module), target: 'subgroup-matrix' as const });
  const block = o.block === undefined ? getWorkload(o.workload).tensorCoreBlock?.(workloadOptions(o)) : undefined;
  try {
    if (block) {
      try {
        return lower(rebuild(block));
      } catch (e) {
        if (!(e instanceof CompileError)) throw e;
      }
    }
    return lower(built);
  } catch (e) {
    if (o.target === 'subgroup-matrix' || !(e instanceof CompileError)) throw e;
    return { built, placed, target: 'simt' };
  }
}

/**
 * About `count` of `rows` rows, one in every `rows / count`: row r where r mod every equals
 * ⌊r / every⌋ mod every, so that successive samples sit at different offsets within a tile.
 */
export function rowSample(rows: number, count: number): RowSample {
  const every = Math.max(1, Math.floor(rows / Math.max(1, count)));
  return (r) => r % every === Math.floor(r / every) % every;
}

/** The boxes cut to the rows `sample` holds: one box per kept row (all of each box without a sample). */
function sampledBoxes(boxes: readonly Box[], sample: RowSample | undefined): readonly Box[] {
  if (!sample) return boxes;
  return boxes.flatMap((b) => {
    const kept: Box[] = [];
    for (let r = b.lo[0]!; r < b.hi[0]!; r++) if (sample(r)) kept.push({ lo: [r, ...b.lo.slice(1)], hi: [r + 1, ...b.hi.slice(1)] });
    return kept;
  });
}

/** `gpu-signal`, `peer-copy`, or both joined by `+`: how the chunks of a run travelled. */
function routesUsed(placed: PlacedKernels, chunks: number): string {
  const routes = placed.phases?.route ?? Array<string>(chunks).fill('gpu-signal');
  const used = [...new Set(routes)].sort();
  return used.length === 0 ? 'none' : used.join('+');
}

interface Session {
  run(): Promise<RunResult>;
  read(name: string): Promise<Float32Array[]>;
  destroy(): void;
}

/**
 * Per-run times of `runs` runs after warming up. On one device they go back to back in one submission
 * (GPU time per run where the adapter has timestamps): with a host round trip between runs a GPU
 * idles and lowers its clocks. Runs over several devices need the host between phases anyway.
 * Warm-up is `warmup` runs, repeated as a batch until the clocks settle (`warmUntilSettled`).
 */
async function timeRuns(session: Session, warmup: number, runs: number, busyMs = 0): Promise<{ times: number[]; timing: RunResult['timing']; perRun: boolean }> {
  if (runs === 0) return { times: [], timing: 'wall-clock', perRun: true };
  const batch = async (count: number): Promise<{ times: number[]; timing: RunResult['timing']; perRun: boolean }> => {
    if (session instanceof FusedSession) {
      const r = await session.runBackToBack(count);
      // Without timestamps only the batch's mean is known: no per-run spread to report.
      return { times: r.gpuMs ?? Array<number>(count).fill(r.wallMs / count), timing: r.timing, perRun: r.gpuMs !== undefined };
    }
    const times: number[] = [];
    for (let i = 0; i < count; i++) times.push((await session.run()).wallMs);
    return { times, timing: 'wall-clock', perRun: true };
  };
  if (warmup > 0) await warmUntilSettled(async () => (await batch(warmup)).times, busyMs);
  return batch(runs);
}

/** Per run, the GPU time of the phases of `view` that run no tiles: each run launched phase by phase, each phase timed. */
async function timeTilelessPhases(session: FusedSession, view: DeviceView, runs: number): Promise<number[]> {
  const tileless = view.phases.map((p) => p.tiles.every((t) => t.count === 0));
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const results = await Promise.all(view.phases.map((_, p) => session.launchPhase(p, { timing: true })));
    await session.checkKernelErrors();
    times.push(results.reduce((sum, r, p) => sum + (tileless[p] ? (r.gpuMs ?? []).reduce((a, b) => a + b, 0) : 0), 0));
  }
  return times;
}

/** The workload options of a run. */
function workloadOptions(o: RunWorkloadOptions): WorkloadOptions {
  return {
    ranks: o.ranks,
    shape: o.shape,
    dtype: o.dtype,
    ...(o.chunksPerRank === undefined ? {} : { chunksPerRank: o.chunksPerRank }),
    ...(o.block === undefined ? {} : { block: o.block }),
    ...(o.reduction === undefined ? {} : { reduction: o.reduction }),
    ...(devicesOf(o) > 1 ? { devices: devicesOf(o) } : {}),
    ...(o.gather === undefined ? {} : { gather: o.gather }),
    ...(o.pooling === undefined ? {} : { pooling: o.pooling }),
  };
}

/** The tile of the first `dot` in `ops` (nested loops included): its result's M×N, its operands' K. */
function dotBlock(ops: Module['kernel']['body']): BlockShape | undefined {
  for (const op of ops) {
    if (op.op === 'dot') return { m: op.result.type.shape[0]!, n: op.result.type.shape[1]!, k: op.a.type.shape[1]! };
    const inner = op.op === 'for' ? dotBlock(op.body) : undefined;
    if (inner) return inner;
  }
  return undefined;
}

/** A workload's kernel, compiled with its plan (or none). */
interface BuiltWorkload {
  readonly kernel: Module;
  readonly compiled: CompiledKernel;
  /** The chunk plan's name (RunReport.plan). */
  readonly plan: string;
}

function buildWorkload(o: RunWorkloadOptions, wo: WorkloadOptions): BuiltWorkload {
  const built = getWorkload(o.workload).build(wo);
  // Without transfers every tensor is each rank's own: the tiles read what the rank holds.
  const kernel = o.withoutTransfers ? { ...built.kernel, tensors: built.kernel.tensors.map((t) => ({ ...t, distribution: { kind: 'replicated' as const } })) } : built.kernel;
  const plan = o.withoutTransfers
    ? { ...built.plan, name: 'none', chunks: [] }
    : o.backend === 'auto'
      ? built.plan
      : { ...built.plan, chunks: built.plan.chunks.map((c) => ({ ...c, backend: o.backend })) };
  // The order knows the placement: a reduce-add between devices sends first (ReorderOptions.rankDevice).
  return { kernel, plan: plan.name ?? 'unnamed', compiled: compileOrThrow(kernel, plan, { passOptions: { 'reorder-tiles': { order: o.order, rankDevice: rankPlacement(o) } } }) };
}

export async function runWorkload(o: RunWorkloadOptions): Promise<RunReport> {
  const group = o.processes !== undefined && o.processes.size > 1 ? o.processes : undefined;
  // Under an MPI job a device a process, unless told otherwise.
  if (group && o.devices === undefined && o.handles === undefined) o = { ...o, devices: group.size };
  const workload = getWorkload(o.workload);
  const wo = workloadOptions(o);
  // Under an MPI job: which process opens each device (refused here, before any opens, if the counts do not divide).
  const deviceProcess = group && placeProcesses(o.ranks, rankPlacement(o), devicesOf(o), group.size);
  // Chunks between processes go by mpi: the placement knows the processes.
  if (deviceProcess) o = { ...o, codegen: { ...o.codegen, deviceProcess } };
  let built = buildWorkload(o, wo);
  let placed = placeWorkload(o, built.compiled.module);
  const { kernel } = built;
  const inputs = workload.inputs(wo, o.seed);
  const check = (o.verify ?? true) && !o.withoutTransfers;
  const outputRows = kernel.tensors.find((t) => t.name === workload.outputs[0])!.shape[0]!;
  const sample = o.verifyRows === undefined ? undefined : rowSample(outputRows, o.verifyRows);
  const expected = check ? workload.reference(wo, inputs, sample) : undefined;
  const given = o.handles ?? (o.device ? [o.device] : undefined);
  const devices = given ?? (await openRunDevices(placed.devices.length, group, o.robustness === false ? { gpu: { robustness: false } } : {}, deviceProcess));
  const ours = devices.flatMap((d, i) => (d ? [i] : []));
  const first = devices[ours[0]!]!;
  let target: 'simt' | 'subgroup-matrix' = o.codegen?.target === undefined || o.codegen.target === 'simt' ? 'simt' : 'subgroup-matrix';
  try {
    // The target needs the device (its features); the kernels it runs are the ones reported as lowered.
    if (o.codegen?.target === undefined) ({ built, placed, target } = retarget(o, built, placed, first, (block) => buildWorkload(o, { ...wo, block })));
    const { compiled } = built;
    const block = dotBlock(built.kernel.kernel.body);
    await o.onLowered?.({ module: compiled.module, placed });
    const open = { read: workload.outputs, ...(o.timeoutMs === undefined ? {} : { timeoutMs: o.timeoutMs }), ...(o.peerCopy && { peerCopy: o.peerCopy }), ...(o.copier && { copier: o.copier }) };
    const session: FusedSession | PlacedSession =
      placed.devices.length === 1
        ? await FusedSession.open(first, placed.devices[0]!.kernel, inputs, open)
        : await PlacedSession.open(devices, compiled.module, placed, inputs, { ...open, ...(group && { processes: { group, deviceProcess: deviceProcess! } }) });
    // This process's ranks' copies of each output.
    const tensors: Record<string, ReadonlyMap<number, Float32Array>> = {};
    let timed: Awaited<ReturnType<typeof timeRuns>>;
    let commMs: RunReport['commMs'];
    try {
      // The first run checks the answer (and pays for any lazy shader compilation); the next ones are timed.
      await session.run();
      if (check) for (const name of workload.outputs) tensors[name] = session instanceof PlacedSession ? await session.readRanks(name) : new Map((await session.read(name)).entries());
      timed = await timeRuns(session, o.warmupRuns ?? 0, o.timedRuns ?? 3, o.warmupBusyMs);
      // A run over processes takes as long as its slowest process.
      if (group) timed = { ...timed, times: await slowestPerRun(group, timed.times) };
      if (o.timeCommunication && session instanceof FusedSession && first.hasTimestamps) {
        commMs = summarize(await timeTilelessPhases(session, placed.devices[0]!.view, o.timeCommunication));
      }
      await o.afterTimedRuns?.(session, { module: compiled.module, placed, devices });
    } finally {
      session.destroy();
    }
    let error = check ? 0 : NaN;
    for (const name of check ? workload.outputs : []) {
      const shape = kernel.tensors.find((t) => t.name === name)!.shape;
      for (const [r, got] of tensors[name]!) {
        for (const region of sampledBoxes(regionBoxes(workload.checkedRegion(wo, name, r)), sample)) {
          error = Math.max(error, maxAbsError(got, expected![name]![r]!, region, shape));
        }
      }
    }
    if (group) error = await worstOver(group, error);
    return {
      workload: o.workload,
      shape: o.shape,
      ranks: o.ranks,
      devices: placed.devices.length,
      backend: routesUsed(placed, compiled.module.chunks.length),
      plan: built.plan,
      order: o.order,
      dtype: o.dtype,
      target,
      ...(block && { block }),
      ...(placed.phases && { phasing: placed.phases.phasing }),
      verified: error <= (workload.tolerance?.(wo) ?? 0),
      maxAbsError: error,
      fusedMs: summarize(timed.times).median,
      timings: summarize(timed.times, timed.perRun),
      timing: timed.timing,
      ...(commMs ? { commMs } : {}),
      phases: placed.devices.map((d) => d.kernel.phases.length),
      adapter: adapterLabel(first, placed.devices.length),
      robustness: hasRobustness(first.toggles),
      ...(group && { processes: await processLayout(group, placed.rankDevice, deviceProcess!, devices) }),
    };
  } finally {
    if (!given) devices.forEach((d) => d?.close());
  }
}

export { openRunDevices } from '../api/run-devices.js';
