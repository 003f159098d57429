// The example of docs/getting-started.md runs here; each of the doc's code blocks must equal the
// region of the same name below.
import { describe, expect, it, vi } from 'vitest';
import { docCodeBlock, readRepoFile, region } from './doc-sync.js';

const logged = vi.spyOn(console, 'log').mockImplementation(() => {});

// #region kernel
import * as E from 'fp-ts/lib/Either.js';
import { buildModule, compile, formatDiagnostic, formatTimings, mul, replicated, sharded, type ChunkPlan } from '@syncopate/core';

const [M, N, K] = [128, 128, 64];

// Each tile computes a 64x64 block of C = A·B, written as if all of A were local.
// A and C are sharded on rows over 2 ranks; B is replicated.
const kernel = buildModule('ag_gemm', { ranks: 2 }, (mb) => {
  const A = mb.tensor('A', [M, K], 'f32', sharded(0));
  const B = mb.tensor('B', [K, N], 'f32', replicated());
  const C = mb.tensor('C', [M, N], 'f32', sharded(0));
  mb.kernel('gemm', [M / 64, N / 64], (kb) => {
    const pm = kb.programId(0, 'pm');
    const pn = kb.programId(1, 'pn');
    const [acc] = kb.for(0, K, 32, [kb.zeros([64, 64], 'f32', 'acc')], (k, [acc]) => {
      const a = kb.load(A, [mul(pm, 64), k], [64, 32], 'a');
      const b = kb.load(B, [k, mul(pn, 64)], [32, 64], 'b');
      return [kb.dot(a, b, acc, 'd')];
    });
    kb.store(C, [mul(pm, 64), mul(pn, 64)], acc);
  });
});
// #endregion kernel

// #region plan
// An all-gather of A: each rank sends its 64 rows to the other, in two chunks of 32 rows,
// the first at step 0 and the second at step 1.
const plan: ChunkPlan = {
  name: 'all-gather(@A) in halves',
  ranks: 2,
  chunks: [
    { tensor: 'A', region: { lo: [0, 0], hi: [32, K] }, src: 0, dst: 1, step: 0 },
    { tensor: 'A', region: { lo: [64, 0], hi: [96, K] }, src: 1, dst: 0, step: 0 },
    { tensor: 'A', region: { lo: [32, 0], hi: [64, K] }, src: 0, dst: 1, step: 1 },
    { tensor: 'A', region: { lo: [96, 0], hi: [128, K] }, src: 1, dst: 0, step: 1 },
  ],
};
// #endregion plan

// #region compile
const result = compile(kernel, plan, {
  printAfter: 'all',
  onDump: (pass, ir) => console.log(`// ----- IR after ${pass} -----\n${ir}`),
});
if (E.isLeft(result)) throw new Error(result.left.map(formatDiagnostic).join('\n'));

const { module, pipeline, timings } = result.right;
console.log(`pipeline: ${pipeline}`);
console.log(formatTimings(timings));
console.log(`chunks: ${module.chunks.map((c) => `%${c.value.name}`).join(' ')}`);
// #endregion compile

// #region errors
const wrong = compile(kernel, { ...plan, ranks: 4 });
if (E.isLeft(wrong)) console.log(wrong.left.map(formatDiagnostic).join('\n'));
// error[plan/ranks] (attach-plan) module: the plan is for 4 ranks but module @ag_gemm has 2
// #endregion errors

const printed = logged.mock.calls.map((args) => args.map(String).join(' '));
logged.mockRestore();

describe('the getting-started example', () => {
  it('prints the IR after each pass, the pipeline, the timings and the chunks', () => {
    expect(printed.slice(0, 4).map((p) => p.split('\n')[0])).toEqual(['attach-plan', 'align-chunks', 'reorder-tiles', 'insert-barriers'].map((pass) => `// ----- IR after ${pass} -----`));
    expect(printed[3]).toContain('wait %c1 when %pm in [1, 2)');
    expect(printed[4]).toBe('pipeline: attach-plan,align-chunks,reorder-tiles,insert-barriers');
    expect(printed[5]).toMatch(/^pass +ms +share\n/);
    expect(printed[6]).toBe('chunks: %c0 %c1 %c2 %c3');
  });

  it('prints the diagnostic the doc shows for the wrong plan', () => {
    expect(printed[7]).toBe('error[plan/ranks] (attach-plan) module: the plan is for 4 ranks but module @ag_gemm has 2');
    expect(printed).toHaveLength(8);
  });

  it('is the code docs/getting-started.md shows', () => {
    const file = 'packages/core/test/getting-started.test.ts';
    const doc = readRepoFile('docs/getting-started.md');
    const source = readRepoFile(file);
    for (const name of ['kernel', 'plan', 'compile', 'errors']) expect(docCodeBlock(doc, file, name), name).toBe(region(source, name));
  });
});
