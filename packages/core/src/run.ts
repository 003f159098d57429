/**
 * Compile, lower, run and check: a workload end to end on one device. The kernel is compiled with
 * the Syncopate passes, lowered to one fused WGSL kernel (gpu-signal backend), run for all ranks in
 * one dispatch, and its outputs are checked against the workload's CPU reference.
 */
import * as E from 'fp-ts/lib/Either.js';
import { SyncopateError, type Box } from '@syncopate/ir';
import { CONTROL, emitFusedKernel, KERNEL_ERRORS, tensorBytes, type CodegenOptions, type FusedKernel, type TensorBinding } from '@syncopate/backends';
import { Executor, openGpu, requestDevice, type DeviceHandle, type RunResult } from '@syncopate/runtime';
import { compileOrThrow, type CompiledKernel } from './compile.js';
import { CompileError } from './errors.js';
import { fromHalfBits, toHalfBits } from './half.js';
import { getWorkload, maxAbsError, UsageError, type RunOptions, type RunReport, type TensorData, type WorkloadOptions } from './workloads/index.js';

export type { RunOptions, RunReport } from './workloads/index.js';

/** A fused kernel gave up waiting: `chunk` never reached `rank` (or its lock was never free). */
export class ChunkTimeoutError extends SyncopateError {
  constructor(
    readonly reason: (typeof KERNEL_ERRORS)[keyof typeof KERNEL_ERRORS],
    readonly chunk: string,
    readonly rank: number,
  ) {
    super(
      reason === 'wait-timeout'
        ? `rank ${rank} timed out waiting for chunk %${chunk}: it was never published`
        : `rank ${rank} timed out waiting for the lock of chunk %${chunk}`,
    );
  }
}

/** Lowers a compiled kernel to WGSL; throws `CompileError` with what the backend cannot lower. */
export function lowerToWgsl(compiled: CompiledKernel, options: CodegenOptions = {}): FusedKernel {
  const fused = emitFusedKernel(compiled.module, options);
  if (E.isLeft(fused)) throw new CompileError(fused.left);
  return fused.right;
}

export function emitWgsl(compiled: CompiledKernel): string {
  return lowerToWgsl(compiled).wgsl;
}

const tensorBuffer = (name: string) => `tensor:${name}`;

/** Every rank's copy of a tensor, back to back, as the fused kernel binds it: f32, or half bits for f16. */
function packRanks(t: TensorBinding, perRank: readonly Float32Array[]): Float32Array | Uint16Array {
  const elements = perRank[0]?.length ?? 0;
  const out = new Float32Array(elements * perRank.length);
  perRank.forEach((data, r) => out.set(data, r * elements));
  return t.dtype === 'f16' ? toHalfBits(out) : out;
}

/** The inverse of `packRanks`, from the buffer as read back (f16 buffers end in padding to a word). */
function unpackRanks(t: TensorBinding, buffer: ArrayBuffer, ranks: number): Float32Array[] {
  const elements = t.elementsPerRank;
  const data = t.dtype === 'f16' ? fromHalfBits(new Uint16Array(buffer, 0, elements * ranks)) : new Float32Array(buffer, 0, elements * ranks);
  return Array.from({ length: ranks }, (_, r) => data.slice(r * elements, (r + 1) * elements));
}

export interface FusedRun {
  /** Every tensor per rank after the run. */
  readonly tensors: TensorData;
  readonly run: RunResult;
}

/**
 * A fused kernel ready to run on one device: buffers allocated and uploaded, pipeline compiled.
 * `run` can be called again (benchmarks): it clears the control buffer (tickets, flags, counters)
 * first; the kernel's own writes make it idempotent on the tensors.
 */
export class FusedSession {
  private constructor(
    private readonly executor: Executor,
    private readonly fused: FusedKernel,
    private readonly kernel: Awaited<ReturnType<Executor['compile']>>,
  ) {}

  static async open(device: DeviceHandle, fused: FusedKernel, inputs: TensorData, options: { timeoutMs?: number; read?: readonly string[] } = {}): Promise<FusedSession> {
    if (fused.usesF16 && !device.features.includes('shader-f16')) {
      const f16 = fused.tensors.filter((t) => t.dtype === 'f16').map((t) => t.name);
      // missingFeatures lists what was asked for and the adapter lacks; otherwise the caller left it out.
      const why = device.missingFeatures.includes('shader-f16')
        ? 'the adapter has no shader-f16'
        : 'the device was opened without shader-f16 (add it to requiredFeatures)';
      throw new UsageError(`the kernel has f16 tensors (${f16.join(', ')}), but ${why}: use --dtype f32`);
    }
    const executor = Executor.create(device, options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs });
    try {
      await executor.allocate([
        ...fused.tensors.map((t) => ({
          name: tensorBuffer(t.name),
          bytes: tensorBytes(t, fused.ranks),
          usage: 'storage' as const,
          init: packRanks(t, inputs[t.name] ?? []),
          readback: options.read?.includes(t.name) ?? false,
        })),
        { name: 'control', bytes: fused.control.layout.words * 4, usage: 'storage', readback: true },
        { name: 'tables', bytes: fused.tables.data.byteLength, usage: 'storage', init: fused.tables.data },
      ]);
      const kernel = await executor.compile({
        name: 'fused',
        wgsl: fused.wgsl,
        entryPoint: fused.entryPoint,
        bindings: [
          ...fused.tensors.map((t) => ({ binding: t.binding, buffer: tensorBuffer(t.name) })),
          { binding: fused.control.binding, buffer: 'control' },
          { binding: fused.tables.binding, buffer: 'tables' },
        ],
        workgroups: [fused.dispatch[0], fused.dispatch[1]],
      });
      return new FusedSession(executor, fused, kernel);
    } catch (e) {
      executor.destroy();
      throw e;
    }
  }

  /** One launch; throws `ChunkTimeoutError` when a spin-wait of the kernel gave up. */
  async run(): Promise<RunResult> {
    return this.runBackToBack(1);
  }

  /**
   * `count` launches in one submission, the control buffer cleared on the GPU before each: no host
   * round trip between them, so the GPU stays busy (and its clocks up) as it would in a model.
   * Only the last launch's errors can be seen afterwards; check correctness with `run`.
   */
  async runBackToBack(count: number): Promise<RunResult> {
    const result = await this.executor.run(Array.from({ length: count }, () => ({ kernel: this.kernel, clear: ['control'] })));
    const control = new Uint32Array(await this.executor.read('control'));
    const code = control[CONTROL.errorCode]!;
    if (code !== 0) {
      const reason = KERNEL_ERRORS[code as keyof typeof KERNEL_ERRORS] ?? 'wait-timeout';
      throw new ChunkTimeoutError(reason, this.fused.chunkNames[control[CONTROL.errorChunk]!] ?? '?', control[CONTROL.errorRank]!);
    }
    return result;
  }

  /** A tensor, per rank, as f32 (f16 tensors converted exactly). */
  async read(name: string): Promise<Float32Array[]> {
    const buffer = await this.executor.read(tensorBuffer(name));
    return unpackRanks(this.fused.tensors.find((t) => t.name === name)!, buffer, this.fused.ranks);
  }

  destroy(): void {
    this.executor.destroy();
  }
}

/** Runs a fused kernel once over `inputs` (every tensor, per rank) and reads back the tensors in `read`. */
export async function runFused(
  device: DeviceHandle,
  fused: FusedKernel,
  inputs: TensorData,
  read: readonly string[],
  options: { timeoutMs?: number } = {},
): Promise<FusedRun> {
  const session = await FusedSession.open(device, fused, inputs, { ...options, read });
  try {
    const run = await session.run();
    const tensors: TensorData = {};
    for (const name of read) tensors[name] = await session.read(name);
    return { tensors, run };
  } finally {
    session.destroy();
  }
}

/** Opens the first adapter and a device with what the runs need. */
export async function openDevice(): Promise<DeviceHandle> {
  return requestDevice(await openGpu(), { requiredLimits: 'adapter-max' });
}

function describeAdapter(device: DeviceHandle): string {
  const info = device.adapterInfo;
  return [info.vendor, info.device || info.description, info.architecture].filter(Boolean).join(' ') || 'unknown adapter';
}

export interface RunWorkloadOptions extends RunOptions {
  /** A device to run on (kept open); default: open one and close it afterwards. */
  readonly device?: DeviceHandle;
  readonly codegen?: CodegenOptions;
  /** Runs timed after the checked one (default 3); `fusedMs` is their median. */
  readonly timedRuns?: number;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

export async function runWorkload(o: RunWorkloadOptions): Promise<RunReport> {
  if (o.backend === 'peer-copy') {
    throw new UsageError('the peer-copy backend moves chunks between devices; runs use one device today: use --backend gpu-signal or auto');
  }
  const workload = getWorkload(o.workload);
  const wo: WorkloadOptions = {
    ranks: o.ranks,
    shape: o.shape,
    dtype: o.dtype,
    ...(o.chunksPerRank === undefined ? {} : { chunksPerRank: o.chunksPerRank }),
    ...(o.block === undefined ? {} : { block: o.block }),
  };
  const { kernel, plan } = workload.build(wo);
  const compiled = compileOrThrow(kernel, plan, { passOptions: { 'reorder-tiles': { order: o.order } } });
  const fused = lowerToWgsl(compiled, o.codegen);
  const inputs = workload.inputs(wo, o.seed);
  const expected = workload.reference(wo, inputs);
  const device = o.device ?? (await openDevice());
  try {
    const session = await FusedSession.open(device, fused, inputs, { read: workload.outputs });
    const tensors: TensorData = {};
    const times: number[] = [];
    let timing: RunResult['timing'] = 'wall-clock';
    try {
      // The first run checks the answer (and pays for any lazy shader compilation); the next ones are timed.
      await session.run();
      for (const name of workload.outputs) tensors[name] = await session.read(name);
      for (let i = 0; i < (o.timedRuns ?? 3); i++) {
        const run = await session.run();
        times.push(run.gpuMs?.[0] ?? run.wallMs);
        timing = run.timing;
      }
    } finally {
      session.destroy();
    }
    let error = 0;
    for (const name of workload.outputs) {
      const shape = kernel.tensors.find((t) => t.name === name)!.shape;
      for (let r = 0; r < o.ranks; r++) {
        const region: Box = workload.checkedRegion(wo, name, r);
        error = Math.max(error, maxAbsError(tensors[name]![r]!, expected[name]![r]!, region, shape));
      }
    }
    return {
      workload: o.workload,
      shape: o.shape,
      ranks: o.ranks,
      devices: 1,
      backend: 'gpu-signal',
      order: o.order,
      dtype: o.dtype,
      verified: error === 0,
      maxAbsError: error,
      fusedMs: median(times),
      timing,
      adapter: describeAdapter(device),
    };
  } finally {
    if (!o.device) device.close();
  }
}
