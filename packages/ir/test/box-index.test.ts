import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BoxIndex, overlaps, type Box } from '../src/index.js';

const boxArb = (rank: number) =>
  fc.array(fc.tuple(fc.integer({ min: -3, max: 12 }), fc.integer({ min: -2, max: 8 })), { minLength: rank, maxLength: rank }).map(
    (axes): Box => ({ lo: axes.map(([lo]) => lo), hi: axes.map(([lo, len]) => lo + len) }),
  );

describe('BoxIndex', () => {
  it('finds exactly the boxes that overlap a query, in the order given', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3 }).chain((rank) => fc.tuple(fc.array(boxArb(rank), { maxLength: 40 }), fc.array(boxArb(rank), { minLength: 1, maxLength: 10 }))),
        ([boxes, queries]) => {
          const index = new BoxIndex(boxes, (b) => b);
          for (const q of queries) {
            const expected = boxes.flatMap((b, i) => (overlaps(b, q) ? [i] : []));
            expect(index.meetingPositions(q)).toEqual(expected);
            expect(index.meeting(q)).toEqual(expected.map((i) => boxes[i]));
          }
        },
      ),
    );
  });

  it('answers for an empty list', () => {
    expect(new BoxIndex<Box>([], (b) => b).meeting({ lo: [0], hi: [4] })).toEqual([]);
  });
});
