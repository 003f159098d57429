import { withTimeout } from './timeout.js';

/** A compute pass's timestamps as the device wrote them: nanoseconds of the device's own counter. */
export interface PassTicks {
  readonly begin: bigint;
  readonly end: bigint;
}

/** Where a pass ran on a device's timeline: milliseconds after that device's `GpuClock` origin. */
export interface PassSpan {
  readonly beginMs: number;
  readonly endMs: number;
}

/**
 * One device's timestamps on one axis. A device's timestamp counter runs on across submits, so
 * ticks of different submits compare; this subtracts one origin (the first begin tick it is shown)
 * from all of them, exactly in bigint, before turning them into milliseconds, so the ticks of
 * every submit of the device line up and keep full precision however long the machine has been up.
 * Ticks of different devices do not compare: each device gets its own clock.
 */
export class GpuClock {
  private origin: bigint | undefined;

  spans(ticks: readonly PassTicks[]): PassSpan[] {
    this.origin ??= ticks.reduce<bigint | undefined>((o, t) => (o === undefined || t.begin < o ? t.begin : o), undefined);
    const origin = this.origin ?? 0n;
    return ticks.map(({ begin, end }) => {
      const beginMs = Number(begin - origin) / 1e6;
      // An end before its begin (a driver reset the counter) reads as an empty pass.
      return { beginMs, endMs: end > begin ? Number(end - origin) / 1e6 : beginMs };
    });
  }
}

/** Milliseconds per pass; an end before its begin (a driver reset the counter) reads as 0. */
export function passDurationsMs(ticks: readonly PassTicks[]): number[] {
  return ticks.map(({ begin, end }) => (end > begin ? Number(end - begin) / 1e6 : 0));
}

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

  /** Each pass's begin and end ticks; call once the submit that holds `resolve` is done. */
  async readTicks(timeoutMs: number): Promise<PassTicks[]> {
    await withTimeout(this.staging.mapAsync(GPUMapMode.READ), timeoutMs, 'timestamp readback', this.device);
    const ticks = new BigUint64Array(this.staging.getMappedRange().slice(0));
    this.staging.unmap();
    return Array.from({ length: this.passes }, (_, pass) => ({ begin: ticks[2 * pass] ?? 0n, end: ticks[2 * pass + 1] ?? 0n }));
  }

  /** Milliseconds per pass; call once the submit that holds `resolve` is done. */
  async read(timeoutMs: number): Promise<number[]> {
    return passDurationsMs(await this.readTicks(timeoutMs));
  }

  destroy(): void {
    this.querySet.destroy();
    this.resolved.destroy();
    this.staging.destroy();
  }
}
