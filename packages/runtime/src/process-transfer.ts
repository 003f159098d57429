/**
 * A peer copy whose two devices live in different processes: the source process reads each piece
 * back into a mapped staging buffer and sends it straight from there; the destination process
 * receives it straight into a mapped upload staging buffer and copies it into place. The link (an
 * MPI process group) moves the bytes on its own thread; both ends cut the same pieces (PeerCopier's
 * `piecesOf`), and piece i of a transfer travels as message `tag + i`.
 */
import type { DeviceHandle } from './gpu.js';
import { PeerCopyError, UsageError } from './errors.js';
import type { PeerCopier, TransferStages } from './peer-copy.js';
import { withTimeout } from './timeout.js';
import type { ByteRange, Piece } from './transfer-pieces.js';

/** What carries bytes between processes (a ProcessGroup): a send out of and a receive into a mapped range. */
export interface ProcessLink {
  send(from: GPUBuffer, bytes: number, to: number, tag: number, label: string): Promise<void>;
  receive(into: GPUBuffer, bytes: number, from: number, tag: number, label: string): Promise<void>;
}

/** One end of a transfer between processes: the local buffer, and the process at the other end. */
export interface ProcessEnd {
  readonly device: DeviceHandle;
  readonly buffer: GPUBuffer;
  /** The process at the other end. */
  readonly peer: number;
  /** Names the far device in errors, e.g. "device 1 (process 1 on host b)". */
  readonly peerDevice: string;
}

/** Byte runs at the same offsets in both buffers, as the ranges a transfer moves. */
const rangesOf = (runs: readonly { readonly offset: number; readonly bytes: number }[]): ByteRange[] => {
  const bad = runs.find((r) => r.bytes % 4 !== 0 || r.bytes <= 0 || r.offset % 4 !== 0);
  if (bad || runs.length === 0) {
    throw new UsageError(`transfer between processes: runs must be non-empty, with offsets and sizes positive multiples of 4${bad ? `, got ${bad.bytes} bytes at ${bad.offset}` : ''}`);
  }
  return runs.map((r) => ({ from: r.offset, to: r.offset, bytes: r.bytes }));
};

/** How many messages a transfer of `runs` takes: the tags it uses are `tag` to `tag + count - 1`. */
export function messageCount(copier: PeerCopier, runs: readonly { readonly offset: number; readonly bytes: number }[]): number {
  return copier.piecesOf(rangesOf(runs)).pieces.length;
}

/**
 * Runs each piece through `step` on `ring` lanes, pieces taken in order; every lane settles before a
 * failure is passed on (a lane may hold a mapped range another thread is writing).
 */
async function inLanes(pieces: readonly Piece[], ring: number, step: (piece: Piece, i: number) => Promise<void>, fail: (e: unknown, i: number) => unknown): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < pieces.length) {
      const i = next++;
      try {
        await step(pieces[i]!, i);
      } catch (e) {
        next = pieces.length;
        throw fail(e, i);
      }
    }
  };
  const lanes = await Promise.allSettled(Array.from({ length: Math.min(ring, pieces.length) }, lane));
  const failed = lanes.find((l): l is PromiseRejectedResult => l.status === 'rejected');
  if (failed) throw failed.reason;
}

const local = (d: DeviceHandle) => d.adapterInfo.description || 'a device';

/**
 * Sends `runs` of `from.buffer` to process `from.peer`; resolves once every piece has left (its
 * staging may be reused). `flow` as in PeerCopier.copyRuns.
 */
export async function sendRuns(
  copier: PeerCopier,
  link: ProcessLink,
  from: ProcessEnd,
  runs: readonly { readonly offset: number; readonly bytes: number }[],
  tag: number,
  label: string,
  flow: 'alone' | 'beside-compute' = 'alone',
  observe?: (stages: TransferStages) => void,
): Promise<void> {
  const startMs = performance.now();
  const { pieces, size } = copier.piecesOf(rangesOf(runs));
  const { ring, readAhead } = copier.flows[flow];
  const reads = copier.readPool(from.device.device);
  // Each piece's copy out, submitted in order, `readAhead` ahead of the sends done so far.
  const readbacks: { buffer: GPUBuffer; mapped: Promise<void>; given: boolean }[] = [];
  let sent = 0;
  let mappedMs = 0;
  const readBackUpTo = (last: number) => {
    for (let i = readbacks.length; i <= Math.min(last, pieces.length - 1); i++) {
      const buffer = reads.take(size);
      const out = from.device.device.createCommandEncoder({ label: 'process-copy out' });
      for (const s of pieces[i]!.segments) out.copyBufferToBuffer(from.buffer, s.from, buffer, s.packed, s.bytes);
      from.device.device.queue.submit([out.finish()]);
      const mapped = withTimeout(buffer.mapAsync(GPUMapMode.READ, 0, pieces[i]!.bytes), copier.timeoutMs, 'transfer to another process: reading the source', from.device.device);
      mapped.catch(() => {}); // awaited by the piece's lane
      readbacks[i] = { buffer, mapped, given: false };
    }
  };
  readBackUpTo(readAhead - 1);
  try {
    await inLanes(
      pieces,
      ring,
      async (piece, i) => {
        readBackUpTo(i);
        const readback = readbacks[i]!;
        await readback.mapped;
        mappedMs ||= performance.now();
        // Mapped until the send is done: the link reads the range on its own thread.
        await link.send(readback.buffer, piece.bytes, from.peer, tag + i, label);
        readback.given = true;
        reads.give(readback.buffer);
        readBackUpTo(++sent + readAhead - 1);
      },
      (e, i) => (e instanceof UsageError || e instanceof PeerCopyError ? e : new PeerCopyError(label, local(from.device), from.peerDevice, i, pieces.length, e)),
    );
  } finally {
    // Read-backs no lane sent (a failure) go back to the pool once their maps settle.
    const unsent = readbacks.filter((r) => !r.given);
    await Promise.allSettled(unsent.map((r) => r.mapped));
    for (const r of unsent) reads.give(r.buffer);
  }
  const submittedMs = performance.now();
  observe?.({ startMs, sourceMappedMs: mappedMs, submittedMs, doneMs: submittedMs, pieces: [] });
}

/**
 * Receives `runs` of `to.buffer` from process `to.peer` (sent by `sendRuns` with the same runs and
 * tag). With `settle: 'submitted'` it resolves once every copy into place is on the device's queue,
 * with 'done' once they have run.
 */
export async function receiveRuns(
  copier: PeerCopier,
  link: ProcessLink,
  to: ProcessEnd,
  runs: readonly { readonly offset: number; readonly bytes: number }[],
  tag: number,
  label: string,
  settle: 'done' | 'submitted' = 'done',
  flow: 'alone' | 'beside-compute' = 'alone',
  observe?: (stages: TransferStages) => void,
): Promise<void> {
  const startMs = performance.now();
  const { pieces, size } = copier.piecesOf(rangesOf(runs));
  const { ring, readAhead } = copier.flows[flow];
  const device = to.device.device;
  const uploads = copier.uploadPool(device);
  const landed: Promise<void>[] = [];
  let firstMs = 0;
  await inLanes(
    pieces,
    ring,
    async (piece, i) => {
      const staging = uploads.take(size, readAhead);
      try {
        await withTimeout(staging.ready, copier.timeoutMs, 'transfer from another process: mapping the destination staging', device);
        // The receive settles only once its bytes are in (or it was cancelled): the range is not unmapped under it.
        await link.receive(staging.buffer, piece.bytes, to.peer, tag + i, label);
        firstMs ||= performance.now();
        staging.buffer.unmap();
        const into = device.createCommandEncoder({ label: 'process-copy in' });
        for (const s of piece.segments) into.copyBufferToBuffer(staging.buffer, s.packed, to.buffer, s.to, s.bytes);
        device.queue.submit([into.finish()]);
      } finally {
        // Mapped again at once; its map resolving says this upload is done.
        uploads.give(staging);
      }
      landed.push(staging.ready);
    },
    (e, i) => (e instanceof UsageError || e instanceof PeerCopyError ? e : new PeerCopyError(label, to.peerDevice, local(to.device), i, pieces.length, e)),
  );
  const submittedMs = performance.now();
  if (settle === 'done') {
    try {
      await withTimeout(Promise.all(landed), copier.timeoutMs, 'transfer from another process: writing the destination', device);
    } catch (e) {
      throw new PeerCopyError(label, to.peerDevice, local(to.device), pieces.length - 1, pieces.length, e);
    }
  }
  observe?.({ startMs, sourceMappedMs: firstMs, submittedMs, ...(settle === 'done' ? { doneMs: performance.now() } : {}), pieces: [] });
}
