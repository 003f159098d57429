// The compile() example of the root README runs here; the README's code block must equal the region below.
import { describe, expect, it, vi } from 'vitest';
import { docCodeBlock, readRepoFile, region } from './doc-sync.js';

const logged = vi.spyOn(console, 'log').mockImplementation(() => {});

// #region readme
import * as E from 'fp-ts/lib/Either.js';
import { compile, formatDiagnostic, formatTimings, gemmKernel, type ChunkPlan } from '@syncopate/core';

// A local tiled GEMM, C = A·B, written as if all data were local; A is sharded on rows over 2 ranks.
const kernel = gemmKernel({ m: 128, n: 128, k: 64 }, { ranks: 2, distribute: 'ag' });

// The communication: each rank sends its half of A to the other (an all-gather).
const plan: ChunkPlan = {
  ranks: 2,
  chunks: [
    { tensor: 'A', region: { lo: [0, 0], hi: [64, 64] }, src: 0, dst: 1, step: 0 },
    { tensor: 'A', region: { lo: [64, 0], hi: [128, 64] }, src: 1, dst: 0, step: 0 },
  ],
};

const result = compile(kernel, plan, { printAfter: 'all' });
if (E.isLeft(result)) {
  console.error(result.left.map(formatDiagnostic).join('\n'));
} else {
  for (const { pass, ir } of result.right.dumps) console.log(`// ----- IR after ${pass} -----\n${ir}`);
  console.log(formatTimings(result.right.timings));
}
// #endregion readme

const printed = logged.mock.calls.map((args) => args.map(String).join(' '));
logged.mockRestore();

describe('the README example', () => {
  it('compiles, prints the IR after each pass and the timings', () => {
    expect(E.isRight(result) && result.right.module.chunks).toHaveLength(2);
    expect(printed).toHaveLength(5);
    expect(printed[0]).toMatch(/^\/\/ ----- IR after attach-plan -----\n/);
    expect(printed[3]).toContain('wait %c1 when %pm in [1, 2)');
    expect(printed[4]).toMatch(/^pass +ms +share\nattach-plan /);
  });

  it('is the code README.md shows', () => {
    const file = 'packages/core/test/readme.test.ts';
    expect(docCodeBlock(readRepoFile('README.md'), file, 'readme')).toBe(region(readRepoFile(file), 'readme'));
  });
});
