/**
 * A transfer's byte runs cut into pieces of at most `pieceBytes`, each packed from offset 0 of one
 * staging buffer: the unit that streams through the copier's ring (read back, host copy, upload).
 */
export interface ByteRange {
  /** Offset in the source buffer. */
  readonly from: number;
  /** Offset in the destination buffer. */
  readonly to: number;
  readonly bytes: number;
}

export interface PieceSegment extends ByteRange {
  /** Offset of this segment in the piece's staging buffer. */
  readonly packed: number;
}

export interface Piece {
  readonly segments: readonly PieceSegment[];
  readonly bytes: number;
}

/** Runs split at piece boundaries, in order; every piece but the last holds exactly `pieceBytes`. */
export function cutPieces(runs: readonly ByteRange[], pieceBytes: number): Piece[] {
  const pieces: Piece[] = [];
  let segments: PieceSegment[] = [];
  let filled = 0;
  for (const run of runs) {
    let done = 0;
    while (done < run.bytes) {
      const bytes = Math.min(run.bytes - done, pieceBytes - filled);
      segments.push({ from: run.from + done, to: run.to + done, bytes, packed: filled });
      done += bytes;
      filled += bytes;
      if (filled === pieceBytes) {
        pieces.push({ segments, bytes: filled });
        segments = [];
        filled = 0;
      }
    }
  }
  if (filled > 0) pieces.push({ segments, bytes: filled });
  return pieces;
}

/**
 * The piece size for a transfer: a power of two, so that pooled staging buffers are shared between
 * transfers of similar sizes; small enough that `ring` pieces are in flight (a 16 MiB transfer in a
 * ring of 4 streams as four 4 MiB pieces), at least `minBytes` (each piece costs a submit and two maps)
 * and at most `maxBytes`.
 */
export function pieceSize(bytes: number, ring: number, minBytes: number, maxBytes: number): number {
  const wanted = 2 ** Math.ceil(Math.log2(Math.max(1, Math.ceil(bytes / ring))));
  return Math.min(maxBytes, Math.max(minBytes, wanted));
}
