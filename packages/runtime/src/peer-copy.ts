/**
 * Moving bytes between two devices, which WebGPU lets share no memory: through the host. A transfer
 * is cut into pieces (transfer-pieces.ts) that stream through a ring: each piece is copied into a
 * MAP_READ staging buffer of the source and mapped, its bytes are copied on the host into a MAP_WRITE
 * staging buffer of the destination that is already mapped (staging-pool.ts keeps them mapped ahead),
 * and that is copied into place. With `ring` pieces in flight, the read-back of one piece, the host
 * copy of another and the upload of a third run at once. A transfer is done when every piece's upload
 * buffer has mapped again (which waits for its upload): no onSubmittedWorkDone.
 *
 * Measured (benchmarks/peer-copy.md): a read-back moves ~50 GB/s and Dawn resolves a map 0.02-0.05 ms
 * after the GPU is done; the host copy out of a mapped read-back range runs at 5-13 GB/s on the one JS
 * thread, which bounded every transfer until it moved onto libuv's threads (host-copy.ts: 28.5 GB/s
 * end to end at 64 MiB on two H200s, against 10.7 on the JS thread); queue.writeBuffer managed
 * 1.3 GB/s, so uploads go through mapped staging.
 */
import type { DeviceHandle } from './gpu.js';
import { PeerCopyError, UsageError } from './errors.js';
import { ReadbackPool, UploadPool } from './staging-pool.js';
import { copyMapped, hostCopier, type HostCopier } from './host-copy.js';
import { withTimeout } from './timeout.js';
import { cutPieces, pieceSize, type ByteRange, type Piece } from './transfer-pieces.js';

export interface BufferRange {
  readonly device: DeviceHandle;
  /** Must have COPY_SRC (source) or COPY_DST (destination) usage. */
  readonly buffer: GPUBuffer;
  readonly offset: number;
}

export interface PeerCopy {
  readonly from: BufferRange;
  readonly to: BufferRange;
  /** A multiple of 4, like every WebGPU buffer copy. */
  readonly bytes: number;
}

/**
 * Host times (`performance.now()`) of one transfer's stages, for timelines: started; the source's
 * bytes of the first piece mapped on the host (its copy out waited for the work queued before it on
 * the source); the last copy into place submitted on the destination; and, with `settle: 'done'`,
 * finished there.
 */
export interface TransferStages {
  readonly startMs: number;
  readonly sourceMappedMs: number;
  readonly submittedMs: number;
  readonly doneMs?: number;
  /** Per piece, in order: when it started and when each of its steps was over (where a transfer stalls). */
  readonly pieces: readonly PieceStages[];
}

/** Host times of one piece: started (its read-back submitted), read-back mapped, upload staging mapped, host copy done, upload submitted. */
export interface PieceStages {
  readonly startMs: number;
  readonly readMappedMs: number;
  readonly stagingReadyMs: number;
  readonly copiedMs: number;
  readonly submittedMs: number;
}

export interface PeerCopierOptions {
  /** Longest wait on any one GPU promise; default 30 s. */
  readonly timeoutMs?: number;
  /** Transfers in flight at once in `copyAll`; default 4. */
  readonly inFlight?: number;
  /** Pieces of one transfer in flight at once (the ring's depth) when it runs alone; default 4. */
  readonly ring?: number;
  /** Pieces of one transfer read back ahead of their host copy when it runs alone; default `ring`. */
  readonly readAhead?: number;
  /**
   * The flow of a transfer with compute queued beside it (`copyRuns`'s `flow`); default the flow of
   * one alone. A read-back submitted after the next phase of compute maps only once that phase is
   * done (a device's work completes in submission order), so reading every piece back before the phase
   * goes in keeps the transfer from waiting for it. On two H200s, once no garbage collection landed in
   * the runs, neither `{ ring: 4, readAhead: 8 }` nor `{ ring: 2, readAhead: 8 }` made a fused run
   * faster and both made its transfers slower, so it is not the default (benchmarks/peer-copy.md).
   */
  readonly besideCompute?: Partial<TransferFlow>;
  /** Largest piece, a power of two; default 4 MiB. */
  readonly maxPieceBytes?: number;
  /**
   * Smallest piece a transfer is cut into, a power of two; default 1 MiB: a transfer of 1 MiB or less
   * goes as one piece (on two H200s one 1 MiB piece took 0.21-0.28 ms, four of 256 KiB 0.31-0.47:
   * each piece costs its round trips; benchmarks/peer-copy.md).
   */
  readonly minPieceBytes?: number;
  /** The host copy between the two mapped ranges; default the native one where its addon loads (host-copy.ts). */
  readonly hostCopy?: HostCopier;
}

function describe(handle: DeviceHandle): string {
  const placed = handle as DeviceHandle & { index?: number; placement?: { description: string } };
  return placed.index !== undefined ? `device ${placed.index} (${placed.placement?.description ?? handle.adapterInfo.description})` : handle.adapterInfo.description || 'a device';
}

/**
 * How many pieces of one transfer are in flight: host copies and uploads (`ring`), and read-backs
 * (`readAhead`, at least `ring`: a piece's read-back is submitted before its lane takes it). Upload
 * staging grows to `readAhead` buffers, so a piece never waits for one whose upload is queued behind
 * compute on the destination.
 */
export interface TransferFlow {
  readonly ring: number;
  readonly readAhead: number;
}

/** One piece's copy out of the source: its staging buffer and when it was mapped (host time). */
interface Readback {
  readonly buffer: GPUBuffer;
  readonly startMs: number;
  readonly mapped: Promise<number>;
  /** Back in the pool (after its host copy, or the transfer's failure). */
  given?: boolean;
}

const isPowerOfTwo = (n: number) => Number.isInteger(n) && n >= 4 && (n & (n - 1)) === 0;

export class PeerCopier {
  private readonly readPools = new Map<GPUDevice, ReadbackPool>();
  private readonly uploadPools = new Map<GPUDevice, UploadPool>();
  /** @internal */
  readonly timeoutMs: number;
  private readonly inFlight: number;
  /** @internal Transfers alone and transfers beside compute (`copyRuns`'s `flow`). */
  readonly flows: Readonly<Record<'alone' | 'beside-compute', TransferFlow>>;
  private readonly maxPieceBytes: number;
  private readonly minPieceBytes: number;
  /** How each piece's bytes cross the host: 'native' (libuv's thread pool) or 'js' (the JS thread). */
  readonly hostCopy: HostCopier;

  constructor(options: PeerCopierOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.inFlight = options.inFlight ?? 4;
    const ring = options.ring ?? 4;
    const alone = { ring, readAhead: options.readAhead ?? ring };
    const beside = options.besideCompute ?? {};
    const besideRing = beside.ring ?? alone.ring;
    this.flows = { alone, 'beside-compute': { ring: besideRing, readAhead: beside.readAhead ?? Math.max(besideRing, alone.readAhead) } };
    this.maxPieceBytes = options.maxPieceBytes ?? 4 << 20;
    this.minPieceBytes = options.minPieceBytes ?? 1 << 20;
    this.hostCopy = options.hostCopy ?? hostCopier().copier;
    if (!Number.isInteger(this.inFlight) || this.inFlight < 1) throw new UsageError(`inFlight must be a positive integer, got ${this.inFlight}`);
    for (const [name, flow] of Object.entries(this.flows)) {
      if (!Number.isInteger(flow.ring) || flow.ring < 1 || !Number.isInteger(flow.readAhead) || flow.readAhead < flow.ring) {
        throw new UsageError(`${name}: ring must be a positive integer and readAhead an integer at least ring, got ring ${flow.ring}, readAhead ${flow.readAhead}`);
      }
    }
    if (!isPowerOfTwo(this.maxPieceBytes) || !isPowerOfTwo(this.minPieceBytes) || this.minPieceBytes > this.maxPieceBytes) {
      throw new UsageError(`piece sizes must be powers of two >= 4 with min <= max, got min ${this.minPieceBytes}, max ${this.maxPieceBytes}`);
    }
  }

  /**
   * @internal The pieces a transfer of `ranges` is cut into: the same on every process for the same
   * ranges and options, so the two ends of a transfer between processes agree (process-transfer.ts).
   */
  piecesOf(ranges: readonly ByteRange[]): { readonly pieces: Piece[]; readonly size: number } {
    // Cut by the alone flow's ring in either flow: the same pieces, so the same pooled staging.
    const size = pieceSize(
      ranges.reduce((n, r) => n + r.bytes, 0),
      this.flows.alone.ring,
      this.minPieceBytes,
      this.maxPieceBytes,
    );
    return { pieces: cutPieces(ranges, size), size };
  }

  /** @internal */
  readPool(device: GPUDevice): ReadbackPool {
    let pool = this.readPools.get(device);
    if (!pool) this.readPools.set(device, (pool = new ReadbackPool(device)));
    return pool;
  }

  /** @internal */
  uploadPool(device: GPUDevice): UploadPool {
    let pool = this.uploadPools.get(device);
    if (!pool) this.uploadPools.set(device, (pool = new UploadPool(device)));
    return pool;
  }

  /** Staging buffers created so far (all devices, both directions): flat once transfers repeat. */
  get stagingBuffers(): number {
    return [...this.readPools.values(), ...this.uploadPools.values()].reduce((n, p) => n + p.created, 0);
  }

  /** One transfer; resolves once the bytes are in place on the destination. */
  async copy(c: PeerCopy): Promise<void> {
    if (c.bytes % 4 !== 0 || c.bytes <= 0 || c.from.offset % 4 !== 0 || c.to.offset % 4 !== 0) {
      throw new UsageError(`peer copy of ${c.bytes} bytes at offsets ${c.from.offset} -> ${c.to.offset}: sizes and offsets must be positive multiples of 4`);
    }
    await this.move(c.from.device, c.from.buffer, c.to.device, c.to.buffer, [{ from: c.from.offset, to: c.to.offset, bytes: c.bytes }], 'done', undefined, `of ${c.bytes} bytes`, this.flows.alone);
  }

  /**
   * Moves `runs` (byte ranges at the same offsets in both buffers). With `settle: 'submitted'` it
   * resolves once every copy into `to` is on the destination's queue: work submitted there afterwards
   * sees the bytes, and the caller need not wait for the queue to drain. `observe`, if given, gets the
   * host times of the transfer's stages once it has settled. `label` names the transfer in errors
   * (e.g. "chunk 3 (rank 0 -> rank 1)"). `flow` 'beside-compute' is for a transfer the caller submits
   * compute beside, on either device, while it is in flight (PeerCopierOptions.besideCompute).
   */
  async copyRuns(
    from: { readonly device: DeviceHandle; readonly buffer: GPUBuffer },
    to: { readonly device: DeviceHandle; readonly buffer: GPUBuffer },
    runs: readonly { readonly offset: number; readonly bytes: number }[],
    settle: 'done' | 'submitted' = 'done',
    observe?: (stages: TransferStages) => void,
    label?: string,
    flow: 'alone' | 'beside-compute' = 'alone',
  ): Promise<void> {
    const bad = runs.find((r) => r.bytes % 4 !== 0 || r.bytes <= 0 || r.offset % 4 !== 0);
    if (bad || runs.length === 0) {
      throw new UsageError(`peer copy: runs must be non-empty, with offsets and sizes positive multiples of 4${bad ? `, got ${bad.bytes} bytes at ${bad.offset}` : ''}`);
    }
    const ranges = runs.map((r) => ({ from: r.offset, to: r.offset, bytes: r.bytes }));
    await this.move(from.device, from.buffer, to.device, to.buffer, ranges, settle, observe, label ?? `of ${ranges.reduce((n, r) => n + r.bytes, 0)} bytes`, this.flows[flow]);
  }

  private async move(
    source: DeviceHandle,
    sourceBuffer: GPUBuffer,
    target: DeviceHandle,
    targetBuffer: GPUBuffer,
    ranges: readonly ByteRange[],
    settle: 'done' | 'submitted',
    observe: ((stages: TransferStages) => void) | undefined,
    label: string,
    flow: TransferFlow,
  ): Promise<void> {
    const startMs = performance.now();
    const { pieces, size } = this.piecesOf(ranges);
    const reads = this.readPool(source.device);
    // Per piece, its copy out of the source, submitted in piece order `readAhead` pieces ahead of the
    // host copies done so far, and at the latest when a lane takes the piece.
    const readbacks: Readback[] = [];
    let copied = 0;
    const readBackUpTo = (last: number) => {
      for (let i = readbacks.length; i <= Math.min(last, pieces.length - 1); i++) readBack(i);
    };
    const readBack = (i: number) => {
      const piece = pieces[i]!;
      const startMs = performance.now();
      const buffer = reads.take(size);
      const out = source.device.createCommandEncoder({ label: 'peer-copy out' });
      for (const s of piece.segments) out.copyBufferToBuffer(sourceBuffer, s.from, buffer, s.packed, s.bytes);
      source.device.queue.submit([out.finish()]);
      const mapped = withTimeout(buffer.mapAsync(GPUMapMode.READ, 0, piece.bytes), this.timeoutMs, 'peer copy: reading the source', source.device).then(() => performance.now());
      mapped.catch(() => {}); // awaited by the piece's lane; not unhandled if the transfer fails first
      readbacks[i] = { buffer, startMs, mapped };
    };
    readBackUpTo(flow.readAhead - 1);
    let submittedMs = 0;
    let next = 0;
    const stages: PieceStages[] = [];
    // Per piece: its upload staging mapping again, which resolves once that upload is done.
    const landed: Promise<void>[] = [];
    const lane = async () => {
      while (next < pieces.length) {
        const i = next++;
        try {
          readBackUpTo(i);
          const moved = await this.movePiece(readbacks[i]!, reads, target, targetBuffer, pieces[i]!, size, flow.readAhead, () => readBackUpTo(++copied + flow.readAhead - 1));
          landed.push(moved.landed);
          stages[i] = moved.stages;
          submittedMs = Math.max(submittedMs, performance.now());
        } catch (e) {
          next = pieces.length; // the other lanes stop taking pieces
          throw e instanceof UsageError ? e : new PeerCopyError(label, describe(source), describe(target), i, pieces.length, e);
        }
      }
    };
    // Every lane settles before a failure is passed on: a host copy still running on another thread
    // writes into a mapped range that the caller's clean-up (destroy) would otherwise unmap under it.
    const lanes = await Promise.allSettled(Array.from({ length: Math.min(flow.ring, pieces.length) }, lane));
    const failed = lanes.find((l): l is PromiseRejectedResult => l.status === 'rejected');
    if (failed) {
      // Read-backs submitted ahead that no lane reached go back to the pool once their maps settle.
      const unread = readbacks.filter((r) => !r.given);
      await Promise.allSettled(unread.map((r) => r.mapped));
      for (const r of unread) reads.give(r.buffer);
      throw failed.reason;
    }
    if (settle === 'done') {
      try {
        await withTimeout(Promise.all(landed), this.timeoutMs, 'peer copy: writing the destination', target.device);
      } catch (e) {
        throw new PeerCopyError(label, describe(source), describe(target), pieces.length - 1, pieces.length, e);
      }
    }
    observe?.({ startMs, sourceMappedMs: stages[0]!.readMappedMs, submittedMs, ...(settle === 'done' ? { doneMs: performance.now() } : {}), pieces: stages });
  }

  /**
   * One piece whose read-back was submitted: host copy, upload submitted, its staging one of up to
   * `uploadStaging` of its size. `readbackFree` runs once the read-back buffer is back in its pool.
   * `landed` settles once the upload is done (wrapped, so awaiting the piece does not wait for it).
   */
  private async movePiece(
    readback: Readback,
    reads: ReadbackPool,
    target: DeviceHandle,
    targetBuffer: GPUBuffer,
    piece: Piece,
    stagingBytes: number,
    uploadStaging: number,
    readbackFree: () => void,
  ): Promise<{ readonly landed: Promise<void>; readonly stages: PieceStages }> {
    let stagingReadyMs = 0;
    let stages: PieceStages;
    const dst = target.device;
    const uploads = this.uploadPool(dst);
    const upload = uploads.take(stagingBytes, uploadStaging);
    try {
      const [readMappedMs] = await Promise.all([
        readback.mapped,
        withTimeout(upload.ready, this.timeoutMs, 'peer copy: mapping the destination staging', dst).then(() => (stagingReadyMs = performance.now())),
      ]);
      // Both ranges stay mapped until the copy has settled: they are unmapped after it.
      await copyMapped(this.hostCopy, upload.buffer, readback.buffer, piece.bytes);
      const copiedMs = performance.now();
      readback.given = true;
      reads.give(readback.buffer);
      readbackFree();
      upload.buffer.unmap();
      const into = dst.createCommandEncoder({ label: 'peer-copy in' });
      for (const s of piece.segments) into.copyBufferToBuffer(upload.buffer, s.packed, targetBuffer, s.to, s.bytes);
      dst.queue.submit([into.finish()]);
      stages = { startMs: readback.startMs, readMappedMs, stagingReadyMs, copiedMs, submittedMs: performance.now() };
    } finally {
      if (!readback.given) {
        // A failure before the host copy: the read-back's map may still be pending.
        readback.given = true;
        await readback.mapped.catch(() => {});
        reads.give(readback.buffer);
      }
      // Mapped again at once: ready for the next piece, and its resolving says this upload is done.
      uploads.give(upload);
    }
    return { landed: upload.ready, stages };
  }

  /** Every transfer, at most `inFlight` at once, in order of starting. */
  async copyAll(copies: readonly PeerCopy[]): Promise<void> {
    let next = 0;
    const lane = async () => {
      while (next < copies.length) await this.copy(copies[next++]!);
    };
    await Promise.all(Array.from({ length: Math.min(this.inFlight, copies.length) }, lane));
  }

  destroy(): void {
    for (const p of [...this.readPools.values(), ...this.uploadPools.values()]) p.destroy();
    this.readPools.clear();
    this.uploadPools.clear();
  }
}
