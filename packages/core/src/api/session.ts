/**
 * A fused kernel ready to run on one device: buffers allocated and uploaded (a copy of every tensor
 * per rank), pipeline compiled, launched phase by phase.
 */
import { replicated, SyncopateError } from '@syncopate/ir';
import { CONTROL, KERNEL_ERRORS, tensorBytes, type FusedKernel, type TensorBinding } from '@syncopate/backends';
import { Executor, type CompiledKernel, type DeviceHandle, type KernelPipeline, type RunResult } from '@syncopate/runtime';
import { TensorInputError, unknownTensorError } from './errors.js';
import { initialData, rankCopy } from './tensor-data.js';
import type { RunRecording } from './run-recording.js';
import { UsageError } from './usage-error.js';
import type { TensorData } from './row-major.js';

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

const TENSOR_PREFIX = 'tensor:';
const tensorBuffer = (name: string) => `${TENSOR_PREFIX}${name}`;

/** Throws a UsageError when the kernel needs a feature the device was not opened with. */
function checkFeatures(device: DeviceHandle, fused: FusedKernel): void {
  if (fused.usesF16 && !device.features.includes('shader-f16')) {
    const f16 = fused.tensors.filter((t) => t.dtype === 'f16').map((t) => t.name);
    // missingFeatures lists what was asked for and the adapter lacks; otherwise the caller left it out.
    const why = device.missingFeatures.includes('shader-f16')
      ? 'the adapter has no shader-f16'
      : 'the device was opened without shader-f16 (add it to requiredFeatures)';
    throw new UsageError(`the kernel has f16 tensors (${f16.join(', ')}), but ${why}: use --dtype f32`);
  }
  if (fused.wgsl.includes('enable chromium_experimental_subgroup_matrix;') && !device.features.includes('chromium-experimental-subgroup-matrix')) {
    throw new UsageError('the kernel uses subgroup matrices (target subgroup-matrix), but the device has no chromium-experimental-subgroup-matrix: lower it with target simt');
  }
}

/**
 * `inputs` (every tensor of the kernel, per rank, each rank's whole copy) checked against the kernel's
 * tensors and packed as it binds them: a TensorInputError names the first that does not fit.
 */
function packInputs(fused: FusedKernel, inputs: TensorData): Map<string, Float32Array | Uint16Array> {
  const names = fused.tensors.map((t) => t.name);
  for (const name of Object.keys(inputs)) if (!names.includes(name)) throw unknownTensorError(name, names);
  return new Map(
    fused.tensors.map((t) => {
      const data = inputs[t.name];
      if (data === undefined) throw new TensorInputError(t.name, undefined, `data for it (the kernel reads or writes ${t.name})`, 'none given');
      const spec = { name: t.name, shape: t.shape, dtype: t.dtype, distribution: replicated(), ranks: fused.ranks };
      return [t.name, initialData(spec, data)];
    }),
  );
}

/** Every rank's copy of a tensor, from the buffer as read back (f16 buffers end in padding to a word). */
function unpackRanks(t: TensorBinding, buffer: ArrayBuffer, ranks: number): Float32Array[] {
  return Array.from({ length: ranks }, (_, r) => rankCopy(t.dtype, buffer, t.elementsPerRank, r));
}

export interface FusedRun {
  /** Every tensor per rank after the run. */
  readonly tensors: TensorData;
  readonly run: RunResult;
}

/**
 * A fused kernel ready to run on one device: pipeline compiled, its control and tables buffers
 * allocated, and its tensors bound: buffers of its own, allocated and uploaded (`open`), or the
 * caller's (`prepare`, then `bindTensors`). `run` can be called again (benchmarks): it clears the
 * control buffer (tickets, flags, counters) first; the kernel's own writes make it idempotent on the
 * tensors.
 */
export class FusedSession {
  private kernel: CompiledKernel | undefined;
  private tensors: ReadonlyMap<string, GPUBuffer> = new Map();

  private constructor(
    private readonly executor: Executor,
    private readonly fused: FusedKernel,
    private readonly pipeline: KernelPipeline,
  ) {}

  /** A session over buffers of its own, holding `inputs` (every tensor, per rank). */
  static async open(device: DeviceHandle, fused: FusedKernel, inputs: TensorData, options: { timeoutMs?: number; read?: readonly string[] } = {}): Promise<FusedSession> {
    const packed = packInputs(fused, inputs);
    const session = await FusedSession.prepare(device, fused, options);
    try {
      await session.executor.allocate(
        fused.tensors.map((t) => ({
          name: tensorBuffer(t.name),
          bytes: tensorBytes(t, fused.ranks),
          usage: 'storage' as const,
          init: packed.get(t.name)!,
          readback: options.read?.includes(t.name) ?? false,
        })),
      );
      session.bindTensors(new Map(fused.tensors.map((t) => [t.name, session.executor.buffer(tensorBuffer(t.name))])));
      return session;
    } catch (e) {
      session.destroy();
      throw e;
    }
  }

  /** A session whose tensors the caller binds (`bindTensors`) before it runs. */
  static async prepare(device: DeviceHandle, fused: FusedKernel, options: { timeoutMs?: number } = {}): Promise<FusedSession> {
    checkFeatures(device, fused);
    const executor = Executor.create(device, options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs });
    try {
      await executor.allocate([
        { name: 'control', bytes: fused.control.layout.words * 4, usage: 'storage', readback: true },
        { name: 'tables', bytes: fused.tables.data.byteLength, usage: 'storage', init: fused.tables.data },
      ]);
      const pipeline = await executor.compilePipeline(
        {
          name: 'fused',
          wgsl: fused.wgsl,
          entryPoint: fused.entryPoint,
          bindings: [
            ...fused.tensors.map((t) => ({ binding: t.binding, buffer: tensorBuffer(t.name) })),
            { binding: fused.control.binding, buffer: 'control' },
            { binding: fused.tables.binding, buffer: 'tables' },
            ...(fused.views ?? []).map((v) => ({ binding: v.binding, buffer: tensorBuffer(v.tensor) })),
          ],
          workgroups: [0],
        },
        () => 'storage',
      );
      return new FusedSession(executor, fused, pipeline);
    } catch (e) {
      executor.destroy();
      throw e;
    }
  }

  /**
   * The buffers the kernel's tensors are bound to from now on: every tensor's, each holding every
   * rank's copy back to back (`tensorBytes`). Binding the same buffers again costs nothing.
   */
  bindTensors(buffers: ReadonlyMap<string, GPUBuffer>): void {
    if (this.kernel && this.fused.tensors.every((t) => buffers.get(t.name) === this.tensors.get(t.name))) return;
    const missing = this.fused.tensors.filter((t) => !buffers.has(t.name)).map((t) => t.name);
    if (missing.length > 0) throw new UsageError(`bindTensors: no buffer for ${missing.join(', ')}`);
    this.kernel = this.executor.bind(this.pipeline, (name) => (name.startsWith(TENSOR_PREFIX) ? buffers.get(name.slice(TENSOR_PREFIX.length))! : this.executor.buffer(name)));
    this.tensors = buffers;
  }

  private get bound(): CompiledKernel {
    if (!this.kernel) throw new UsageError('the fused kernel has no tensors bound: call bindTensors first');
    return this.kernel;
  }

  /** One launch; throws `ChunkTimeoutError` when a spin-wait of the kernel gave up. */
  async run(): Promise<RunResult> {
    return this.runBackToBack(1);
  }

  /**
   * Submits one phase (the first clears the control buffer) and resolves when it is done. The
   * submission happens before this returns, so the caller can queue what must follow it (a peer
   * copy of what the phase completed) and the next phase without waiting. Check the kernel's errors
   * with `checkKernelErrors` once every phase is done. With `timing` the phase is timed with
   * timestamp queries where the device has them (for timelines; it costs a query set per launch).
   */
  launchPhase(phase: number, options: { readonly timing?: boolean } = {}): Promise<RunResult> {
    const workgroups = this.fused.phases[phase]!;
    return this.executor.run([{ kernel: this.bound, workgroups, ...(phase === 0 ? { clear: ['control'] } : {}) }], { timing: options.timing ?? false });
  }

  /**
   * One run submitted phase by phase, as a run over several devices submits them, each phase timed
   * where the device can and recorded in `record` as a dispatch of device 0 (trace.ts).
   */
  async runRecorded(record: RunRecording): Promise<void> {
    const launched = this.fused.phases.map((_, p) => this.launchPhase(p, { timing: record.gpuTimestamps }).then((result) => record.dispatches.push({ device: 0, phase: p, result })));
    await Promise.all(launched);
    await this.checkKernelErrors();
  }

  /** Throws `ChunkTimeoutError` when a spin-wait of the last run gave up. */
  async checkKernelErrors(): Promise<void> {
    const control = new Uint32Array(await this.executor.read('control'));
    const code = control[CONTROL.errorCode]!;
    if (code !== 0) {
      const reason = KERNEL_ERRORS[code as keyof typeof KERNEL_ERRORS] ?? 'wait-timeout';
      throw new ChunkTimeoutError(reason, this.fused.chunkNames[control[CONTROL.errorChunk]!] ?? '?', control[CONTROL.errorRank]!);
    }
  }

  /** The GPU buffer a tensor is bound to (every rank's copy), for peer copies. */
  tensorBuffer(name: string): GPUBuffer {
    const buffer = this.tensors.get(name);
    if (!buffer) throw new UsageError(`the fused kernel has no tensor ${name} bound`);
    return buffer;
  }

  /**
   * `count` launches in one submission, the control buffer cleared on the GPU before each: no host
   * round trip between them, so the GPU stays busy (and its clocks up) as it would in a model.
   * Only the last launch's errors can be seen afterwards; check correctness with `run`.
   */
  async runBackToBack(count: number): Promise<RunResult> {
    const launches = this.fused.phases.filter((w) => w[0] > 0).map((workgroups, i) => ({ kernel: this.bound, workgroups, ...(i === 0 ? { clear: ['control'] } : {}) }));
    const result = await this.executor.run(Array.from({ length: count }, () => launches).flat());
    // One figure per run: the sum of its phases.
    const gpuMs = result.gpuMs && Array.from({ length: count }, (_, i) => result.gpuMs!.slice(i * launches.length, (i + 1) * launches.length).reduce((a, b) => a + b, 0));
    await this.checkKernelErrors();
    return gpuMs ? { ...result, gpuMs } : result;
  }

  /** A tensor of its own (`open`), per rank, as f32 (f16 tensors converted exactly). */
  async read(name: string): Promise<Float32Array[]> {
    const buffer = await this.executor.read(tensorBuffer(name));
    return unpackRanks(this.fused.tensors.find((t) => t.name === name)!, buffer, this.fused.ranks);
  }

  destroy(): void {
    this.executor.destroy();
  }
}

