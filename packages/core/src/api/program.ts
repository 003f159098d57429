/**
 * A compiled kernel loaded on a device group: lowered to one fused WGSL kernel per device its ranks
 * are placed on (gpu-signal between ranks of a device, peer-copy through the host between devices),
 * pipelines made. `run` binds the caller's tensors by the kernel's names, checks them first, and runs.
 */
import * as E from 'fp-ts/lib/Either.js';
import { emitPlacedKernels, type CodegenOptions, type PlacedKernels } from '@syncopate/backends';
import type { RunResult } from '@syncopate/runtime';
import type { CompiledKernel } from './compile.js';
import { CompileError } from './compile-error.js';
import { PlacedSession, type PlacedSessionOptions } from './placed-session.js';
import { UsageError } from './usage-error.js';
import type { DeviceGroup } from './device-group.js';
import { TensorInputError, unknownTensorError } from './errors.js';
import type { Tensor } from './tensor.js';
import { formatShape, sameLayout, specOf, type TensorSpec } from './tensor-spec.js';

export interface LoadOptions {
  /** How the kernel is lowered (target, phasing, bounds checks...). */
  readonly codegen?: CodegenOptions;
  /** How chunks between devices move through the host (PeerCopier's options). */
  readonly peerCopy?: PlacedSessionOptions['peerCopy'];
}

export interface ProgramRunOptions {
  /**
   * false: each device waits for every phase and transfer before the next (a baseline with no
   * overlap). Default true.
   */
  readonly overlap?: boolean;
  /** true: the phases that run tiles are not launched, so the run is the kernel's communication alone (benchmarks' overlap bounds). */
  readonly communicationOnly?: boolean;
}

export class Program {
  private destroyed = false;

  private constructor(
    private readonly group: DeviceGroup,
    readonly compiled: CompiledKernel,
    readonly placed: PlacedKernels,
    private readonly session: PlacedSession,
  ) {}

  /** @internal DeviceGroup.load */
  static async load(group: DeviceGroup, compiled: CompiledKernel, options: LoadOptions): Promise<Program> {
    const { module } = compiled;
    const rankDevice = group.placement(module.ranks);
    // Under an MPI job, which process runs each device the ranks are placed on: chunks between them go by mpi.
    const processes = group.processes && { ...group.processes, deviceProcess: group.processes.deviceProcess.slice(0, Math.max(...rankDevice) + 1) };
    let placed: ReturnType<typeof emitPlacedKernels>;
    try {
      placed = emitPlacedKernels(module, rankDevice, processes ? { ...options.codegen, deviceProcess: processes.deviceProcess } : options.codegen);
    } catch (e) {
      // The backends refuse what they cannot lower with a RangeError naming it.
      if (e instanceof RangeError) throw new UsageError(e.message);
      throw e;
    }
    if (E.isLeft(placed)) throw new CompileError(placed.left);
    const session = await PlacedSession.prepare(group.handles, module, placed.right, { timeoutMs: group.timeoutMs, ...(options.peerCopy && { peerCopy: options.peerCopy }), ...(processes && { processes }) });
    return new Program(group, compiled, placed.right, session);
  }

  /** Ranks of the kernel. */
  get ranks(): number {
    return this.compiled.module.ranks;
  }

  /** The tensors the kernel declares, each as `DeviceGroup.tensor` takes it. */
  get tensors(): readonly TensorSpec[] {
    return this.compiled.module.tensors.map((t) => specOf(t, this.ranks));
  }

  /** The spec of the kernel's tensor `name`. */
  spec(name: string): TensorSpec {
    const spec = this.tensors.find((t) => t.name === name);
    if (!spec) throw this.unknownTensor(name);
    return spec;
  }

  /**
   * One run over `tensors`, one for each tensor the kernel declares, by its name: each checked
   * (name, shape, element type, ranks, device group) before anything runs. Outputs stay on the
   * devices: read them, or pass them to the next program.
   */
  async run(tensors: Readonly<Record<string, Tensor>>, options: ProgramRunOptions = {}): Promise<RunResult> {
    this.checkLive();
    this.session.bindTensors(this.bindings(tensors));
    return this.session.run({ overlap: options.overlap ?? true, ...(options.communicationOnly && { communicationOnly: true }) });
  }

  /** Per device, the buffer each of the kernel's tensors binds; throws a typed error naming the first misfit. */
  private bindings(tensors: Readonly<Record<string, Tensor>>): (Map<string, GPUBuffer> | undefined)[] {
    if (typeof tensors !== 'object' || tensors === null) throw new UsageError(`run: tensors must be an object of tensors by name (${this.tensors.map((t) => t.name).join(', ')})`);
    for (const name of Object.keys(tensors)) if (!this.tensors.some((t) => t.name === name)) throw this.unknownTensor(name);
    for (const spec of this.tensors) {
      const tensor = tensors[spec.name];
      if (tensor === undefined) throw new TensorInputError(spec.name, undefined, `a tensor (the kernel reads or writes ${spec.name})`, 'none given');
      if (typeof tensor.belongsTo !== 'function') throw new TensorInputError(spec.name, undefined, 'a Tensor made by DeviceGroup.tensor or wrap', typeof tensor);
      if (!tensor.belongsTo(this.group)) throw new TensorInputError(spec.name, undefined, 'a tensor of the device group the program was loaded on', 'one of another group');
      if (!sameLayout(tensor.spec, spec)) {
        const describe = (s: TensorSpec) => `${formatShape(s.shape)} ${s.dtype} over ${s.ranks} ranks`;
        throw new TensorInputError(spec.name, undefined, describe(spec), describe(tensor.spec));
      }
    }
    return this.placed.devices.map((_, d) => (this.group.runsDevice(d) ? new Map(this.tensors.map((spec) => [spec.name, tensors[spec.name]!.buffer(d)])) : undefined));
  }

  private unknownTensor(name: string): TensorInputError {
    return unknownTensorError(name, this.tensors.map((t) => t.name));
  }

  /** Frees its pipelines and buffers (not the tensors). */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.session.destroy();
  }

  private checkLive(): void {
    this.group.checkOpen();
    if (this.destroyed) throw new UsageError('the program was destroyed');
  }
}
