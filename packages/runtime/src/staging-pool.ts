/**
 * Mappable staging buffers of one device, pooled by size (a power of two), so that nothing is
 * allocated per transfer once the pool is warm. Upload buffers (MAP_WRITE) are kept mapped ahead of
 * need: given back right after their copy into place is submitted, they are mapped again at once, and
 * the map resolves when that copy is done, so the next transfer to take one rarely waits, and the
 * resolved map also says that the upload has finished (no onSubmittedWorkDone needed).
 */

export interface UploadStaging {
  readonly buffer: GPUBuffer;
  /** Resolves once the buffer is mapped for writing (after the GPU's last use of it). */
  ready: Promise<void>;
}

/** Read-back buffers (MAP_READ | COPY_DST), mapped by the transfer after its copy out. */
export class ReadbackPool {
  private readonly free = new Map<number, GPUBuffer[]>();
  created = 0;

  constructor(private readonly device: GPUDevice) {}

  take(size: number): GPUBuffer {
    const buffer = this.free.get(size)?.pop();
    if (buffer) return buffer;
    this.created++;
    return this.device.createBuffer({ size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST, label: 'peer-copy read-back' });
  }

  give(buffer: GPUBuffer): void {
    if (buffer.mapState !== 'unmapped') buffer.unmap();
    const list = this.free.get(buffer.size) ?? [];
    list.push(buffer);
    this.free.set(buffer.size, list);
  }

  destroy(): void {
    for (const list of this.free.values()) for (const b of list) b.destroy();
    this.free.clear();
  }
}

/** Upload buffers (MAP_WRITE | COPY_SRC), created mapped and mapped again as soon as given back. */
export class UploadPool {
  private readonly free = new Map<number, UploadStaging[]>();
  private readonly createdOf = new Map<number, number>();
  created = 0;

  constructor(private readonly device: GPUDevice) {}

  /**
   * A buffer already mapped if one is free; else, while fewer than `limit` of this size exist, a new
   * one (created mapped); else the free one given back first (the first to be done with its upload).
   */
  take(size: number, limit = 1): UploadStaging {
    const free = this.free.get(size) ?? [];
    const mapped = free.findIndex((s) => s.buffer.mapState === 'mapped');
    if (mapped >= 0) return free.splice(mapped, 1)[0]!;
    if (free.length > 0 && (this.createdOf.get(size) ?? 0) >= limit) return free.shift()!;
    this.created++;
    this.createdOf.set(size, (this.createdOf.get(size) ?? 0) + 1);
    const buffer = this.device.createBuffer({ size, usage: GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC, mappedAtCreation: true, label: 'peer-copy upload' });
    return { buffer, ready: Promise.resolve() };
  }

  /** After the copy out of `staging` was submitted: maps it again ahead of its next use. */
  give(staging: UploadStaging): void {
    if (staging.buffer.mapState === 'mapped') staging.buffer.unmap();
    // A map still pending (a transfer that failed before its host copy) stays the one to wait for.
    if (staging.buffer.mapState === 'unmapped') staging.ready = staging.buffer.mapAsync(GPUMapMode.WRITE);
    // Awaited by the next taker; a map that fails (device lost, pool destroyed) must not go unhandled meanwhile.
    staging.ready.catch(() => {});
    const list = this.free.get(staging.buffer.size) ?? [];
    list.push(staging);
    this.free.set(staging.buffer.size, list);
  }

  destroy(): void {
    for (const list of this.free.values()) for (const s of list) s.buffer.destroy();
    this.free.clear();
    this.createdOf.clear();
  }
}
