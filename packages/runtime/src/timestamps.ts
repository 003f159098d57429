import { withTimeout } from './timeout.js';

/**
 * GPU time per compute pass from timestamp queries: each pass writes a timestamp when it begins and one
 * when it ends; after the submit they are resolved into a buffer, copied to a mappable one and read.
 * Dawn quantizes timestamps by default (the low bits are cleared, against timing attacks); the
 * instance toggle `disable-dawn-features=timestamp_quantization` gives full resolution.
 */
export class PassTimer {
  private constructor(
    private readonly device: GPUDevice,
    private readonly passes: number,
    private readonly querySet: GPUQuerySet,
    private readonly resolved: GPUBuffer,
    private readonly staging: GPUBuffer,
  ) {}

  static create(device: GPUDevice, passes: number): PassTimer {
    const count = 2 * passes;
    const bytes = 8 * count;
    return new PassTimer(
      device,
      passes,
      device.createQuerySet({ type: 'timestamp', count, label: 'pass timestamps' }),
      device.createBuffer({ size: bytes, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC }),
      device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST }),
    );
  }

  writesFor(pass: number): GPUComputePassTimestampWrites {
    return { querySet: this.querySet, beginningOfPassWriteIndex: 2 * pass, endOfPassWriteIndex: 2 * pass + 1 };
  }

  /** Encodes the resolve and the copy to the mappable buffer; call after the last pass. */
  resolve(encoder: GPUCommandEncoder): void {
    encoder.resolveQuerySet(this.querySet, 0, 2 * this.passes, this.resolved, 0);
    encoder.copyBufferToBuffer(this.resolved, 0, this.staging, 0, this.staging.size);
  }

  /** Milliseconds per pass; call once the submit that holds `resolve` is done. */
  async read(timeoutMs: number): Promise<number[]> {
    await withTimeout(this.staging.mapAsync(GPUMapMode.READ), timeoutMs, 'timestamp readback', this.device);
    const ticks = new BigUint64Array(this.staging.getMappedRange().slice(0));
    this.staging.unmap();
    const ms: number[] = [];
    for (let pass = 0; pass < this.passes; pass++) {
      const begin = ticks[2 * pass] ?? 0n;
      const end = ticks[2 * pass + 1] ?? 0n;
      // Timestamps are nanoseconds; an end before its begin (a driver reset the counter) reads as 0.
      ms.push(end > begin ? Number(end - begin) / 1e6 : 0);
    }
    return ms;
  }

  destroy(): void {
    this.querySet.destroy();
    this.resolved.destroy();
    this.staging.destroy();
  }
}
