// checkStoreConflicts: a copy may land where its destination's tiles store only when the plan orders it
// after those stores (it forwards, through a chain of chunks, data whose publication waited for them).
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { gemmKernel, type ChunkPlan, type ChunkSpec, type Diagnostic, type Module } from '@syncopate/ir';
import { attachPlan } from '../src/attach-plan.js';
import { checkStoreConflicts, validatePlan } from '../src/analysis/validate-plan.js';
import { allReduce, ringAllGather, ringReduceScatter } from '../src/templates/index.js';

function withPlan(module: Module, plan: ChunkPlan): Module {
  const r = attachPlan.run(module, { plan, options: {} });
  if (E.isLeft(r)) throw new Error(r.left.map((d) => d.message).join('\n'));
  return r.right;
}

const codes = (ds: Diagnostic[]) => ds.map((d) => d.code);

/** A GEMM whose C is a partial sum on every rank: every rank's tiles store all of C. */
const partialGemm = (ranks: number, m: number, n = 16) =>
  gemmKernel({ m, n, k: 16, blockM: 16, blockN: 16, blockK: 16 }, { ranks, distribute: 'rs' });

const cOf = (m: number, n = 16) => ({ name: 'C', shape: [m, n] });
const rows = (lo: number, hi: number, n = 16) => ({ lo: [lo, 0], hi: [hi, n] });

describe('copies onto stored elements', () => {
  it('accepts the ring all-reduce of a GEMM\'s partial C (ranks 2-5, 1-3 chunks a rank, uneven shards)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 5 }), fc.integer({ min: 1, max: 3 }), fc.integer({ min: 0, max: 40 }), (R, cpr, extra) => {
        const m = 16 * R + extra;
        const module = withPlan(partialGemm(R, m), allReduce({ ranks: R, tensor: cOf(m), axis: 0, chunksPerRank: cpr }));
        expect(validatePlan(module)).toEqual([]);
      }),
      { numRuns: 40 },
    );
  });

  it('rejects the all-gather half alone: nothing orders its copies after the destination\'s stores', () => {
    const module = withPlan(partialGemm(3, 48), ringAllGather({ ranks: 3, tensor: cOf(48), axis: 0 }));
    const ds = checkStoreConflicts(module);
    expect(ds).toHaveLength(6);
    expect(ds[0]!.code).toBe('align/store-conflict');
    expect(ds[0]!.message).toMatch(/chunk %c0 \(@C\[0:16, 0:16\] from rank 0 to rank 1 at step 0\) copies into @C\[0:16, 0:16\], which tiles \(0, 0\) of rank 1 also store/);
    expect(ds[0]).toMatchObject({ op: 'chunk', value: 'c0' });
  });

  it('rejects an all-reduce whose all-gather starts at step 0, beside the reduce-scatter', () => {
    const o = { ranks: 3, tensor: cOf(48), axis: 0 };
    const plan = { ranks: 3, chunks: [...ringReduceScatter(o).chunks, ...ringAllGather(o).chunks] };
    const ds = validatePlan(withPlan(partialGemm(3, 48), plan));
    // Every copy of the all-gather races: each forwards only copies, which no destination's stores precede.
    expect(codes(ds)).toEqual(Array(6).fill('align/store-conflict'));
    const copies = new Set(plan.chunks.flatMap((c, i) => (c.kind === 'copy' ? [`c${i}`] : [])));
    expect(new Set(ds.map((d) => d.value))).toEqual(copies);
  });

  it('orders a copy after the stores of every rank its chain passed through, and only those', () => {
    // Rank 0 adds rows 0:16 into rank 1 (step 0); rank 1 then copies the sum on at step 1.
    const add: ChunkSpec = { tensor: 'C', region: rows(0, 16), src: 0, dst: 1, step: 0, kind: 'reduce-add' };
    const back: ChunkSpec = { ...add, src: 1, dst: 0, step: 1, kind: 'copy' };
    const onward: ChunkSpec = { ...back, dst: 2 };
    const module = (chunks: ChunkSpec[]) => withPlan(partialGemm(3, 48), { ranks: 3, chunks });
    // Back to rank 0: the reduce-add it forwards was completed by rank 0's stores.
    expect(checkStoreConflicts(module([add, back]))).toEqual([]);
    // On to rank 2, whose stores nothing in the chain waited for.
    const ds = checkStoreConflicts(module([add, onward]));
    expect(codes(ds)).toEqual(['align/store-conflict']);
    expect(ds[0]!.message).toContain('to rank 2 at step 1) copies into @C[0:16, 0:16]');
    // At the same step as the reduce-add, the copy forwards nothing: a race even back to rank 0.
    expect(codes(checkStoreConflicts(module([add, { ...back, step: 0 }])))).toEqual(['align/store-conflict']);
  });

  it('names only the part of a copy that no chain orders', () => {
    // The reduce-add covers rows 0:16 only; the copy carries rows 0:32 back to rank 0.
    const add: ChunkSpec = { tensor: 'C', region: rows(0, 16), src: 0, dst: 1, step: 0, kind: 'reduce-add' };
    const back: ChunkSpec = { tensor: 'C', region: rows(0, 32), src: 1, dst: 0, step: 1, kind: 'copy' };
    const ds = checkStoreConflicts(withPlan(partialGemm(2, 32), { ranks: 2, chunks: [add, back] }));
    expect(codes(ds)).toEqual(['align/store-conflict']);
    expect(ds[0]!.message).toContain('copies into @C[16:32, 0:16]');
  });

  it('ignores copies onto elements the destination never stores', () => {
    // A copy into A, which the tiles only load.
    const module = withPlan(partialGemm(2, 32), {
      ranks: 2,
      chunks: [{ tensor: 'A', region: { lo: [0, 0], hi: [16, 16] }, src: 0, dst: 1, step: 0, kind: 'copy' }],
    });
    expect(checkStoreConflicts(module)).toEqual([]);
  });
});
