/**
 * The devices a framework opens once and runs every kernel on: tensors live here between kernels,
 * and programs (compiled kernels, lowered and placed) run over them. Ranks are placed on the devices
 * the same way for every program and tensor of a rank count (`placement`), so one kernel's output
 * tensor is the next one's input where it lies, with no host round trip.
 */
import { Executor, placeRanks, type DeviceHandle, type OpenDevicesOptions } from '@syncopate/runtime';
import { openRunDevices } from './run-devices.js';
import { devicesOverProcesses, type ProcessPlacement, type RankProcesses } from './processes.js';
import type { CompiledKernel } from './compile.js';
import { UsageError } from './usage-error.js';
import { Program, type LoadOptions } from './program.js';
import { Tensor } from './tensor.js';
import type { TensorInit } from './tensor-data.js';
import type { TensorSpec } from './tensor-spec.js';

export interface DeviceGroupOptions {
  /** Devices to open (default 1); ranks are spread over them in blocks (`placement`). */
  readonly devices?: number;
  /** Devices already open, used as they are and left open by `close` (instead of `devices`). */
  readonly handles?: readonly DeviceHandle[];
  /** Longest wait on any one GPU promise or transfer (default 30 s). */
  readonly timeoutMs?: number;
  /** Passed to `openDevices` (which GPUs, adapter options). */
  readonly open?: OpenDevicesOptions;
  /**
   * The MPI job this process is one of (`joinProcessGroup`): `devices` then counts the devices of
   * every process (default one each); this one opens its block of them, on its block of its host's
   * GPUs, and runs the ranks placed there. Every process must load the same programs and make the
   * same tensors in the same order.
   */
  readonly processes?: RankProcesses;
}

/** Opens the devices (or takes the handles given) for programs and tensors to share. */
export async function openDeviceGroup(options: DeviceGroupOptions = {}): Promise<DeviceGroup> {
  if (options.handles !== undefined && options.devices !== undefined) throw new UsageError('openDeviceGroup: give devices or handles, not both');
  const job = options.processes && options.processes.size > 1 ? options.processes : undefined;
  if (job && options.handles !== undefined) throw new UsageError('openDeviceGroup: under an MPI job give devices (of every process), not handles');
  const count = options.devices ?? job?.size ?? 1;
  if (!Number.isInteger(count) || count < 1) throw new UsageError(`openDeviceGroup: devices must be a positive integer, got ${count}`);
  const deviceProcess = job && devicesOverProcesses(count, job.size);
  if (options.handles?.length === 0) throw new UsageError('openDeviceGroup: no handles given');
  const slots = options.handles ?? (await openRunDevices(count, job, options.open ?? {}, deviceProcess));
  return new DeviceGroup(slots, options.handles === undefined, options.timeoutMs ?? 30_000, job && { group: job, deviceProcess: deviceProcess! });
}

export class DeviceGroup {
  /** Per device, the store of tensors allocated (or adopted) there; this process's devices only. */
  private readonly stores: readonly (Executor | undefined)[];
  private closed = false;

  /** @internal use openDeviceGroup */
  constructor(
    /** Per device (of every process): its handle, where this process opened it. */
    private readonly slots: readonly (DeviceHandle | undefined)[],
    private readonly ownsDevices: boolean,
    readonly timeoutMs: number,
    /** Under an MPI job: the group, and which process opens each device. */
    readonly processes?: ProcessPlacement,
  ) {
    this.stores = slots.map((d) => d && Executor.create(d, { timeoutMs }));
  }

  /** The devices this process opened (every device of the group outside an MPI job). */
  get devices(): DeviceHandle[] {
    return this.slots.flatMap((d) => (d ? [d] : []));
  }

  /** Devices of the group, over every process. */
  get deviceCount(): number {
    return this.slots.length;
  }

  /** @internal Per device of the group: its handle, undefined where another process runs it. */
  get handles(): readonly (DeviceHandle | undefined)[] {
    return this.slots;
  }

  /** Whether this process runs device `d`. */
  runsDevice(d: number): boolean {
    return this.slots[d] !== undefined;
  }

  /** Rank → device for a kernel or tensor of `ranks` ranks: blocks of ⌈ranks / devices⌉ (placeRanks). */
  placement(ranks: number): number[] {
    try {
      return placeRanks(ranks, this.slots.length);
    } catch (e) {
      throw new UsageError((e as Error).message.replace(/^placeRanks: /, ''));
    }
  }

  /** A compiled kernel lowered to WGSL for these devices, its pipelines made: ready to run on tensors. */
  load(compiled: CompiledKernel, options: LoadOptions = {}): Promise<Program> {
    this.checkOpen();
    return Program.load(this, compiled, options);
  }

  /**
   * A tensor on the devices its ranks are placed on, holding `init`: one array per rank (checked
   * against `spec`; see RankArrays), or `{ fill }` for one value everywhere.
   */
  async tensor(spec: TensorSpec, init: TensorInit): Promise<Tensor> {
    this.checkOpen();
    return Tensor.create(this, spec, init);
  }

  /**
   * A tensor over buffers the caller made, one per device its ranks are placed on, each holding every
   * rank's copy back to back (`Tensor.bytes`) with usage STORAGE | COPY_SRC | COPY_DST. Left to the
   * caller to destroy.
   */
  wrap(spec: TensorSpec, buffers: readonly GPUBuffer[]): Tensor {
    this.checkOpen();
    return Tensor.wrap(this, spec, buffers);
  }

  /** @internal the tensor store of device `d` (one of this process's) */
  store(d: number): Executor {
    const store = this.stores[d];
    if (!store) throw new UsageError(`device ${d} is run by another process`);
    return store;
  }

  /** Frees every tensor made here and closes the devices this group opened. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stores.forEach((s) => s?.destroy());
    if (this.ownsDevices) this.devices.forEach((d) => d.close());
  }

  /** @internal */
  checkOpen(): void {
    if (this.closed) throw new UsageError('the device group is closed');
  }
}
