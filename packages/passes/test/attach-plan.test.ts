import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { buildModule, gemmKernel, mul, sharded, type ChunkPlan, type Diagnostic, type Module } from '@syncopate/ir';
import { attachPlan, editModule, maxValueId, moduleValues, type PassContext } from '@syncopate/passes';

const kernel = gemmKernel({ m: 128, n: 128, k: 64 }, { ranks: 2, distribute: 'ag' });

const twoChunks: ChunkPlan = {
  ranks: 2,
  chunks: [
    { tensor: 'A', region: { lo: [0, 0], hi: [64, 64] }, src: 0, dst: 1, step: 0 },
    { tensor: 'A', region: { lo: [64, 0], hi: [128, 64] }, src: 1, dst: 0, step: 1, kind: 'reduce-add', backend: 'peer-copy' },
  ],
};

const run = (module: Module, plan?: ChunkPlan) => attachPlan.run(module, plan ? { plan, options: {} } : { options: {} });

function attached(module: Module, plan: ChunkPlan): Module {
  const result = run(module, plan);
  if (E.isLeft(result)) throw new Error(result.left.map((d) => d.message).join('\n'));
  return result.right;
}

function problems(module: Module, ctx: PassContext): readonly Diagnostic[] {
  const result = attachPlan.run(module, ctx);
  if (E.isRight(result)) throw new Error('expected diagnostics');
  return result.left;
}

describe('maxValueId and moduleValues', () => {
  it('find the largest id of the GEMM, whose ids run from 0 without gaps', () => {
    const ids = new Set(moduleValues(kernel).map((v) => v.id));
    expect(maxValueId(kernel)).toBe(ids.size - 1);
    expect([...ids].sort((a, b) => a - b)).toEqual([...Array(ids.size).keys()]);
  });

  it('look inside loop bodies', () => {
    // Give the dot inside the loop the largest id; nothing outside the loop mentions it.
    const bumped = editModule(kernel, (d) => {
      const loop = d.kernel.body.find((op) => op.op === 'for');
      const dot = loop?.op === 'for' ? loop.body.find((op) => op.op === 'dot') : undefined;
      if (dot?.op !== 'dot') throw new Error('expected a dot in the loop');
      dot.result.id = 1000;
    });
    expect(maxValueId(bumped)).toBe(1000);
  });

  it('count chunk values and values used only in index expressions', () => {
    const withChunk = attached(kernel, twoChunks);
    expect(maxValueId(withChunk)).toBe(maxValueId(kernel) + 2);
    const farIndex = editModule(kernel, (d) => {
      const store = d.kernel.body.find((op) => op.op === 'store');
      if (store?.op !== 'store') throw new Error('expected a store');
      store.offsets[0]!.terms[0]!.value.id = 500;
    });
    expect(maxValueId(farIndex)).toBe(500);
    const guarded = editModule(withChunk, (d) => {
      const index = { id: 700, name: 'g', type: { kind: 'index' as const } };
      d.kernel.body.push({ op: 'wait', chunk: d.chunks[0]!.value, guard: [{ expr: { constant: 0, terms: [{ value: index, coeff: 1 }] }, lo: 0, hi: 2 }] });
    });
    expect(maxValueId(guarded)).toBe(700);
  });

  it('are -1 and empty for a module without values', () => {
    const empty = buildModule('empty', {}, (mb) => mb.kernel('k', [1], () => {}));
    expect(maxValueId(empty)).toBe(-1);
    expect(moduleValues(empty)).toEqual([]);
  });
});

describe('attach-plan', () => {
  it('declares one chunk per spec, with fresh ids after every id in the module', () => {
    const out = attached(kernel, twoChunks);
    const first = maxValueId(kernel) + 1;
    expect(out.chunks.map((c) => c.value)).toEqual([
      { id: first, name: 'c0', type: { kind: 'chunk' } },
      { id: first + 1, name: 'c1', type: { kind: 'chunk' } },
    ]);
    expect(out.chunks.map(({ value: _, ...rest }) => rest)).toEqual([
      { tensor: 'A', region: { lo: [0, 0], hi: [64, 64] }, src: 0, dst: 1, step: 0, kind: 'copy', backend: 'auto' },
      { tensor: 'A', region: { lo: [64, 0], hi: [128, 64] }, src: 1, dst: 0, step: 1, kind: 'reduce-add', backend: 'peer-copy' },
    ]);
    expect(moduleValues(kernel).some((v) => v.id >= first)).toBe(false);
  });

  it('leaves the rest of the module as it was', () => {
    const out = attached(kernel, twoChunks);
    expect({ ...out, chunks: [] }).toEqual({ ...kernel, chunks: [] });
    expect(out.kernel).toBe(kernel.kernel); // untouched parts are shared, not copied
  });

  it('appends to chunks already declared and skips names already taken', () => {
    const module = buildModule('taken', { ranks: 2 }, (mb) => {
      const X = mb.tensor('X', [128, 64], 'f32', sharded(0));
      mb.chunk({ tensor: 'X', region: { lo: [0, 0], hi: [64, 64] }, src: 0, dst: 1, step: 0 }); // named c0
      mb.kernel('k', [2], (kb) => {
        const pm = kb.programId(0, 'c2');
        kb.store(X, [mul(pm, 64), 0], kb.load(X, [mul(pm, 64), 0], [64, 64], 'c1'));
      });
    });
    const onX = twoChunks.chunks.map((c) => ({ ...c, tensor: 'X' }));
    const out = attached(module, { ranks: 2, chunks: [...onX, onX[0]!] });
    expect(out.chunks.map((c) => c.value.name)).toEqual(['c0', 'c3', 'c4', 'c5']);
    expect(out.chunks.map((c) => c.value.id)).toEqual([0, 3, 4, 5]); // c0, %c2 and %c1 hold ids 0 to 2
  });

  it('adds nothing for a plan without chunks', () => {
    const out = attached(kernel, { ranks: 2, chunks: [] });
    expect(out.chunks).toEqual([]);
  });

  it('freezes what it adds without freezing the caller’s plan', () => {
    const plan = structuredClone(twoChunks);
    const out = attached(kernel, plan);
    expect(Object.isFrozen(out.chunks[0]!.region.lo)).toBe(true);
    expect(Object.isFrozen(plan.chunks[0]!.region.lo)).toBe(false);
    expect(out.chunks[0]!.region.lo).not.toBe(plan.chunks[0]!.region.lo);
  });

  it('reports a missing plan', () => {
    expect(problems(kernel, { options: {} })).toEqual([expect.objectContaining({ severity: 'error', code: 'plan/missing' })]);
  });

  it('reports a plan for another number of ranks', () => {
    const [d] = problems(kernel, { plan: { ...twoChunks, ranks: 4 }, options: {} });
    expect(d).toMatchObject({ severity: 'error', code: 'plan/ranks' });
    expect(d!.message).toBe('the plan is for 4 ranks but module @gemm has 2');
  });

  it('reports each chunk on an unknown tensor by index and tensor, with the ranks problem', () => {
    const plan: ChunkPlan = {
      ranks: 3,
      chunks: [twoChunks.chunks[0]!, { ...twoChunks.chunks[0]!, tensor: 'Q' }, { ...twoChunks.chunks[1]!, tensor: 'a' }],
    };
    const ds = problems(kernel, { plan, options: {} });
    expect(ds.map((d) => d.code)).toEqual(['plan/ranks', 'plan/unknown-tensor', 'plan/unknown-tensor']);
    expect(ds[1]!.message).toBe('chunk 1 moves @Q, which module @gemm does not have (it has @A, @B, @C)');
    expect(ds[2]!.message).toMatch(/^chunk 2 moves @a,/);
    expect(ds[1]!.op).toBe('chunk');
  });
});
