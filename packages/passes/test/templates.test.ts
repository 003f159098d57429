import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ownedBox, sharded, partialSum, type Box, type ChunkPlan } from '@syncopate/ir';
import {
  allReduce,
  allToAll,
  allToAllLayout,
  oneShotAllGather,
  oneShotReduceScatter,
  planFromJson,
  planToJson,
  PlanFormatError,
  ringAllGather,
  ringReduceScatter,
} from '../src/templates/index.js';

/** Row indices of a box along axis 0 (the tests' tensors are sharded on rows). */
const rows = (b: Box): number[] => Array.from({ length: b.hi[0]! - b.lo[0]! }, (_, i) => b.lo[0]! + i);

/**
 * Runs a plan on rows, step by step, with every chunk of a step reading the state before the step.
 * Each rank holds, per row, the set of ranks whose contribution it has. A copy replaces the
 * destination's set (and needs the source to hold a complete row); a reduce-add unions disjoint sets.
 */
function simulate(plan: ChunkPlan, nRows: number, start: (rank: number, row: number) => Set<number>): Set<number>[][] {
  const state = Array.from({ length: plan.ranks }, (_, r) => Array.from({ length: nRows }, (_, row) => start(r, row)));
  const steps = [...new Set(plan.chunks.map((c) => c.step))].sort((a, b) => a - b);
  for (const step of steps) {
    const before = state.map((rs) => rs.map((s) => new Set(s)));
    for (const c of plan.chunks.filter((c) => c.step === step)) {
      for (const row of rows(c.region)) {
        const sent = before[c.src]![row]!;
        const into = state[c.dst]![row]!;
        if (c.kind === 'reduce-add') {
          for (const x of sent) {
            expect(into.has(x), `row ${row}: rank ${c.dst} would add rank ${x}'s partial twice`).toBe(false);
            into.add(x);
          }
        } else {
          expect(sent.size, `row ${row}: rank ${c.src} sends at step ${step} before it has the row`).toBe(plan.ranks);
          state[c.dst]![row] = new Set(sent);
        }
      }
    }
  }
  return state;
}

const all = (R: number) => new Set(Array.from({ length: R }, (_, i) => i));
const tensor = (n: number) => ({ name: 'X', shape: [n, 3] });
const ownsRow = (R: number, n: number) => (r: number, row: number) => {
  const b = ownedBox([n, 3], sharded(0), R, r);
  return row >= b.lo[0]! && row < b.hi[0]! ? all(R) : new Set<number>();
};
const shapes = fc.record({ R: fc.integer({ min: 1, max: 5 }), extra: fc.integer({ min: 0, max: 9 }), cpr: fc.integer({ min: 1, max: 3 }) });

describe('all-gather templates', () => {
  it('ring all-gather of 4 ranks sends 3 shards per rank, one hop along the ring per step', () => {
    const plan = ringAllGather({ ranks: 4, tensor: tensor(8), axis: 0 });
    expect(plan.chunks).toHaveLength(12);
    expect(plan.chunks.filter((c) => c.step === 0).map((c) => [c.src, c.dst, c.region.lo[0]])).toEqual([
      [0, 1, 0],
      [1, 2, 2],
      [2, 3, 4],
      [3, 0, 6],
    ]);
    expect(plan.chunks.every((c) => c.dst === (c.src + 1) % 4)).toBe(true);
  });

  for (const [name, template] of [['ring', ringAllGather], ['one-shot', oneShotAllGather]] as const) {
    it(`${name}: every rank ends with every row, and never sends a row it does not have`, () => {
      fc.assert(
        fc.property(shapes, ({ R, extra, cpr }) => {
          const n = R + extra;
          const plan = template({ ranks: R, tensor: tensor(n), axis: 0, chunksPerRank: cpr });
          const end = simulate(plan, n, ownsRow(R, n));
          expect(end.every((rs) => rs.every((s) => s.size === R))).toBe(true);
        }),
      );
    });
  }
});

describe('reduce-scatter templates', () => {
  for (const [name, template] of [['ring', ringReduceScatter], ['one-shot', oneShotReduceScatter]] as const) {
    it(`${name}: rank d ends with the sum of every rank's partial over its shard, each added once`, () => {
      fc.assert(
        fc.property(shapes, ({ R, extra, cpr }) => {
          const n = R + extra;
          const plan = template({ ranks: R, tensor: tensor(n), axis: 0, chunksPerRank: cpr });
          expect(plan.chunks.every((c) => c.kind === 'reduce-add')).toBe(true);
          const end = simulate(plan, n, (r) => new Set([r]));
          for (let d = 0; d < R; d++) {
            for (const row of rows(ownedBox([n, 3], sharded(0), R, d))) expect(end[d]![row]!.size).toBe(R);
          }
        }),
      );
    });
  }
});

describe('all-reduce', () => {
  it('leaves every rank with the full sum of every row', () => {
    fc.assert(
      fc.property(shapes, ({ R, extra, cpr }) => {
        const n = R + extra;
        const plan = allReduce({ ranks: R, tensor: tensor(n), axis: 0, chunksPerRank: cpr });
        const end = simulate(plan, n, (r) => new Set([r]));
        expect(end.every((rs) => rs.every((s) => s.size === R))).toBe(true);
        expect(ownedBox([n, 3], partialSum(), R, 0).hi).toEqual([n, 3]);
      }),
    );
  });
});

describe('all-to-all', () => {
  const splits = [
    [1, 4, 0],
    [2, 0, 3],
    [0, 5, 1],
  ];

  it('lays rows out destination-major so each rank receives one contiguous range', () => {
    const { offsets, received } = allToAllLayout(splits);
    expect(received).toEqual([
      [0, 3],
      [3, 12],
      [12, 16],
    ]);
    expect(offsets[2]![1]).toBe(3 + 4 + 0);
  });

  it('moves each non-empty off-diagonal split once, one permutation of ranks per step', () => {
    const plan = allToAll({ ranks: 3, tensor: { name: 'T', shape: [16, 8] }, axis: 0, splits });
    expect(plan.chunks.map((c) => [c.src, c.dst, c.region.lo[0], c.region.hi[0], c.step])).toEqual([
      [0, 1, 3, 7, 0],
      [1, 0, 1, 3, 1],
      [1, 2, 12, 15, 0],
      [2, 1, 7, 12, 1],
    ]);
    for (const step of [0, 1]) {
      const at = plan.chunks.filter((c) => c.step === step);
      expect(new Set(at.map((c) => c.src)).size).toBe(at.length);
      expect(new Set(at.map((c) => c.dst)).size).toBe(at.length);
    }
  });

  it('refuses splits that do not match the tensor', () => {
    expect(() => allToAll({ ranks: 3, tensor: { name: 'T', shape: [15, 8] }, axis: 0, splits })).toThrow(/sum to 16/);
    expect(() => allToAll({ ranks: 2, tensor: { name: 'T', shape: [16, 8] }, axis: 0, splits })).toThrow(/2x2 matrix/);
  });
});

describe('template options', () => {
  it('refuse nonsense with a message naming the template and tensor', () => {
    expect(() => ringAllGather({ ranks: 0, tensor: tensor(8), axis: 0 })).toThrow(/ringAllGather\(@X\): ranks/);
    expect(() => ringAllGather({ ranks: 2, tensor: tensor(8), axis: 2 })).toThrow(/axis 2/);
    expect(() => ringAllGather({ ranks: 9, tensor: tensor(8), axis: 0 })).toThrow(/fewer than 9 ranks/);
    expect(() => ringAllGather({ ranks: 2, tensor: tensor(8), axis: 0, chunksPerRank: 0 })).toThrow(/chunksPerRank/);
  });
});

describe('plan JSON form', () => {
  it('round-trips every template', () => {
    const plans = [
      ringAllGather({ ranks: 4, tensor: tensor(8), axis: 0, chunksPerRank: 2 }),
      allReduce({ ranks: 3, tensor: tensor(9), axis: 0, backend: 'peer-copy' }),
      allToAll({ ranks: 3, tensor: { name: 'T', shape: [16, 8] }, axis: 0, splits: [[1, 4, 0], [2, 0, 3], [0, 5, 1]] }),
    ];
    for (const plan of plans) expect(planFromJson(planToJson(plan))).toEqual(plan);
  });

  it('writes one chunk per line', () => {
    const text = planToJson(ringAllGather({ ranks: 2, tensor: tensor(4), axis: 0 }));
    expect(text).toContain('\n    {"tensor":"X","region":[[0,2],[0,3]],"src":0,"dst":1,"step":0,"kind":"copy","backend":"auto"},\n');
  });

  it('fills in defaults for kind and backend', () => {
    const plan = planFromJson('{"version":1,"ranks":2,"chunks":[{"tensor":"A","region":[[0,4]],"src":1,"dst":0,"step":0}]}');
    expect(plan.chunks[0]).toMatchObject({ kind: 'copy', backend: 'auto' });
  });

  const bad: [string, string, RegExp][] = [
    ['{', '(file)', /not valid JSON/],
    ['[]', '(root)', /expected an object/],
    ['{"version":2,"ranks":2,"chunks":[]}', 'version', /expected 1, found 2/],
    ['{"version":1,"ranks":0,"chunks":[]}', 'ranks', /integer >= 1/],
    ['{"version":1,"ranks":2,"chunks":[{"tensor":"A","region":[[4,2]],"src":0,"dst":1,"step":0}]}', 'chunks[0].region[0]', /lo < hi/],
    ['{"version":1,"ranks":2,"chunks":[{"tensor":"A","region":[[0,2]],"src":0,"dst":2,"step":0}]}', 'chunks[0].dst', /out of range for 2 ranks/],
    ['{"version":1,"ranks":2,"chunks":[{"tensor":"A","region":[[0,2]],"src":0,"dst":1,"step":0,"kind":"move"}]}', 'chunks[0].kind', /"copy", "reduce-add"/],
    ['{"version":1,"ranks":2,"chunks":[{"region":[[0,2]],"src":0,"dst":1,"step":0}]}', 'chunks[0].tensor', /tensor name/],
  ];
  for (const [text, path, message] of bad) {
    it(`rejects ${text.slice(0, 50)} at ${path}`, () => {
      try {
        planFromJson(text);
        expect.unreachable();
      } catch (e) {
        expect(e).toBeInstanceOf(PlanFormatError);
        expect((e as PlanFormatError).path).toBe(path);
        expect((e as PlanFormatError).message).toMatch(message);
      }
    });
  }
});
