/**
 * A tensor on a device group: on every device its ranks are placed on, one buffer holding every
 * rank's whole copy back to back, as fused kernels bind it (the copies of ranks elsewhere are where
 * chunks land). It stays there between kernels; `read` and `write` are the only host round trips.
 */
import { tensorBytes } from '@syncopate/backends';
import { TensorInputError } from './errors.js';
import type { DeviceGroup } from './device-group.js';
import { initialData, unpackRank, type TensorInit } from './tensor-data.js';
import { elementsOf, formatShape, type TensorSpec } from './tensor-spec.js';

let nextId = 0;

export class Tensor {
  private destroyed = false;

  private constructor(
    private readonly group: DeviceGroup,
    readonly spec: TensorSpec,
    /** Its name in each device's store. */
    private readonly key: string,
    /** Rank → device. */
    readonly placement: readonly number[],
  ) {}

  /** Bytes of each device's buffer: every rank's copy, rounded up to whole 4-byte words. */
  static bytes(spec: TensorSpec): number {
    return tensorBytes({ name: spec.name, binding: 0, dtype: spec.dtype, shape: spec.shape, elementsPerRank: elementsOf(spec) }, spec.ranks);
  }

  /** @internal DeviceGroup.tensor */
  static async create(group: DeviceGroup, spec: TensorSpec, init: TensorInit): Promise<Tensor> {
    checkSpec(spec);
    const placement = group.placement(spec.ranks);
    const data = initialData(spec, init, ranksHere(group, placement));
    const tensor = new Tensor(group, spec, `tensor#${nextId++}:${spec.name}`, placement);
    const made: number[] = [];
    try {
      for (const d of tensor.devices) {
        await group.store(d).allocate([{ name: tensor.key, bytes: Tensor.bytes(spec), usage: 'storage', init: data }]);
        made.push(d);
      }
    } catch (e) {
      made.forEach((d) => group.store(d).release(tensor.key));
      throw e;
    }
    return tensor;
  }

  /** @internal DeviceGroup.wrap */
  static wrap(group: DeviceGroup, spec: TensorSpec, buffers: readonly GPUBuffer[]): Tensor {
    checkSpec(spec);
    const tensor = new Tensor(group, spec, `tensor#${nextId++}:${spec.name}`, group.placement(spec.ranks));
    const devices = tensor.devices;
    if (buffers.length !== devices.length) throw new TensorInputError(spec.name, undefined, `one buffer for each of the ${devices.length} devices (${devices.join(', ')}) its ${spec.ranks} ranks are placed on${group.processes ? ' in this process' : ''}`, `${buffers.length}`);
    const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    buffers.forEach((b, i) => {
      const d = devices[i]!;
      if ((b.usage & usage) !== usage) throw new TensorInputError(spec.name, undefined, `a buffer on device ${d} with usage STORAGE | COPY_SRC | COPY_DST`, `usage ${b.usage}`);
      if (b.size < Tensor.bytes(spec)) throw new TensorInputError(spec.name, undefined, `a buffer of at least ${Tensor.bytes(spec)} bytes on device ${d} (${spec.ranks} ranks × ${formatShape(spec.shape)} ${spec.dtype})`, `${b.size} bytes`);
    });
    devices.forEach((d, i) => group.store(d).adopt(tensor.key, buffers[i]!));
    return tensor;
  }

  /** The devices its ranks are placed on (under an MPI job, those this process runs), in order. */
  get devices(): number[] {
    return [...new Set(this.placement)].filter((d) => this.group.runsDevice(d));
  }

  /** Its buffer on device `d` (every rank's copy). */
  buffer(d: number): GPUBuffer {
    this.checkLive();
    if (!this.devices.includes(d)) throw new TensorInputError(this.spec.name, undefined, `a device its ranks are on (${this.devices.join(', ')})`, `device ${d}`);
    return this.group.store(d).buffer(this.key);
  }

  /** Whether it lives on `group`. */
  belongsTo(group: DeviceGroup): boolean {
    return this.group === group;
  }

  /** Every rank's whole copy, as f32 (f16 converted exactly), each from the device the rank is placed on. Under an MPI job, `readRanks`. */
  async read(): Promise<Float32Array[]> {
    const ranks = await this.readRanks();
    if (ranks.size < this.placement.length) {
      throw new TensorInputError(this.spec.name, undefined, 'ranks this process runs (readRanks gives those)', `ranks ${this.placement.flatMap((_, r) => (ranks.has(r) ? [] : [r])).join(', ')} of other processes`);
    }
    return this.placement.map((_, rank) => ranks.get(rank)!);
  }

  /** The whole copy of each rank this process runs (all of them outside an MPI job), by rank. */
  async readRanks(): Promise<Map<number, Float32Array>> {
    this.checkLive();
    const buffers = new Map<number, ArrayBuffer>();
    for (const d of this.devices) buffers.set(d, await this.group.store(d).read(this.key));
    return new Map(this.placement.flatMap((d, rank) => (buffers.has(d) ? [[rank, unpackRank(this.spec, buffers.get(d)!, rank)] as const] : [])));
  }

  /** Replaces its contents on every device: `init` as `DeviceGroup.tensor` takes it, checked the same way. */
  write(init: TensorInit): void {
    this.checkLive();
    const data = initialData(this.spec, init, ranksHere(this.group, this.placement));
    for (const d of this.devices) this.group.store(d).write(this.key, data);
  }

  /** Frees its buffers (a wrapped tensor's are the caller's: only forgotten). */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    for (const d of this.devices) this.group.store(d).release(this.key);
  }

  private checkLive(): void {
    this.group.checkOpen();
    if (this.destroyed) throw new TensorInputError(this.spec.name, undefined, 'a live tensor', 'one destroyed');
  }
}

/** Under an MPI job, the ranks this process runs (the others' arrays may be left out); undefined otherwise. */
function ranksHere(group: DeviceGroup, placement: readonly number[]): ReadonlySet<number> | undefined {
  return group.processes && new Set(placement.flatMap((d, rank) => (group.runsDevice(d) ? [rank] : [])));
}

/** Throws a TensorInputError unless `spec` describes a tensor that can be laid out. */
function checkSpec(spec: TensorSpec): void {
  if (!Number.isInteger(spec.ranks) || spec.ranks < 1) throw new TensorInputError(spec.name, undefined, 'ranks a positive integer', String(spec.ranks));
  if (spec.shape.length === 0 || spec.shape.some((d) => !Number.isInteger(d) || d < 1)) throw new TensorInputError(spec.name, undefined, 'a shape of positive integers', formatShape(spec.shape));
  if (spec.dtype !== 'f32' && spec.dtype !== 'f16') throw new TensorInputError(spec.name, undefined, 'dtype f32 or f16', String(spec.dtype));
}
