import { describe, expect, it } from 'vitest';
import { cutPieces, pieceSize } from '../src/transfer-pieces.js';

describe('cutPieces', () => {
  it('splits runs at piece boundaries, packing each piece from 0 and keeping every byte once', () => {
    const runs = [
      { from: 0, to: 100, bytes: 12 },
      { from: 40, to: 200, bytes: 20 },
    ];
    const pieces = cutPieces(runs, 8);
    expect(pieces.map((p) => p.bytes)).toEqual([8, 8, 8, 8]);
    expect(pieces[1]!.segments).toEqual([
      { from: 8, to: 108, bytes: 4, packed: 0 },
      { from: 40, to: 200, bytes: 4, packed: 4 },
    ]);
    // Every source byte lands once, at its destination offset.
    const seen = new Map<number, number>();
    for (const p of pieces) for (const s of p.segments) for (let b = 0; b < s.bytes; b++) seen.set(s.from + b, s.to + b);
    expect(seen.size).toBe(32);
    for (const r of runs) for (let b = 0; b < r.bytes; b++) expect(seen.get(r.from + b)).toBe(r.to + b);
  });

  it('leaves a short last piece', () => {
    expect(cutPieces([{ from: 0, to: 0, bytes: 20 }], 8).map((p) => p.bytes)).toEqual([8, 8, 4]);
  });
});

describe('pieceSize', () => {
  it('cuts a transfer into about `ring` power-of-two pieces within the bounds', () => {
    expect(pieceSize(1 << 20, 4, 64 << 10, 4 << 20)).toBe(256 << 10);
    expect(pieceSize(64 << 20, 4, 64 << 10, 4 << 20)).toBe(4 << 20);
    expect(pieceSize(1024, 4, 64 << 10, 4 << 20)).toBe(64 << 10);
    expect(pieceSize(3 << 20, 4, 64 << 10, 4 << 20)).toBe(1 << 20);
  });
});
