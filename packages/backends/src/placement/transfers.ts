/**
 * The bytes a peer-copy chunk moves: its region of the source rank's copy of the tensor, as
 * contiguous runs of the row-major buffer. The destination device keeps a copy slot for every rank,
 * so the runs land at the same offsets there (the source rank's slot is that device's mailbox; the
 * kernel's token workgroups then copy or add it into the destination rank's slot).
 */
import { dtypeBytes, type ChunkDecl } from '@syncopate/ir';
import type { TensorBinding } from '../fused-kernel.js';

export interface ByteRun {
  readonly offset: number;
  readonly bytes: number;
}

export interface ChunkTransfer {
  readonly chunk: number;
  readonly name: string;
  readonly tensor: string;
  readonly runs: readonly ByteRun[];
  readonly bytes: number;
}

/** Runs of `chunk`'s region in the source rank's slot, exactly (an f16 run may start or end mid-word: aligned-transfers.ts widens it). */
export function chunkTransfer(chunk: ChunkDecl, index: number, t: TensorBinding): ChunkTransfer {
  const size = dtypeBytes(t.dtype);
  const { lo, hi } = chunk.region;
  const strides = t.shape.map((_, i) => t.shape.slice(i + 1).reduce((a, b) => a * b, 1));
  const last = t.shape.length - 1;
  const rowElements = hi[last]! - lo[last]!;
  const runs: ByteRun[] = [];
  const visit = (axis: number, at: number) => {
    if (axis === last) {
      const offset = (chunk.src * t.elementsPerRank + at + lo[last]!) * size;
      const previous = runs[runs.length - 1];
      if (previous && previous.offset + previous.bytes === offset) runs[runs.length - 1] = { offset: previous.offset, bytes: previous.bytes + rowElements * size };
      else runs.push({ offset, bytes: rowElements * size });
      return;
    }
    for (let x = lo[axis]!; x < hi[axis]!; x++) visit(axis + 1, at + x * strides[axis]!);
  };
  visit(0, 0);
  return { chunk: index, name: chunk.value.name, tensor: t.name, runs, bytes: runs.reduce((n, r) => n + r.bytes, 0) };
}
