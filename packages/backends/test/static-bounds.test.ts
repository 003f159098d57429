import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { gemmKernel, mul, type ForOp, type IndexValue, type Module } from '@syncopate/ir';
import { reorderTiles, runPipeline } from '@syncopate/passes';
import { emitFusedKernel } from '../src/index.js';
import { alwaysInside, valueRanges } from '../src/wgsl/static-bounds.js';

function lowered(kernel: Module): Module {
  const r = runPipeline([reorderTiles], kernel, { options: {} });
  if (E.isLeft(r)) throw new Error(r.left.map((d) => d.message).join('\n'));
  return r.right.module;
}

const wgsl = (m: number, n: number, k: number) => {
  const fused = emitFusedKernel(lowered(gemmKernel({ m, n, k, blockM: 128, blockN: 128, blockK: 32, dtype: 'f16' })), { target: 'subgroup-matrix' });
  if (E.isLeft(fused)) throw new Error(fused.left.map((d) => d.message).join('\n'));
  return fused.right.wgsl;
};

describe('static bounds', () => {
  const module = gemmKernel({ m: 256, n: 384, k: 96, blockM: 128, blockN: 128, blockK: 32 });
  const ranges = valueRanges(module);
  const pids = module.kernel.body.flatMap((op) => (op.op === 'program_id' ? [op.result as IndexValue] : []));
  const loop = module.kernel.body.find((op): op is ForOp => op.op === 'for')!;

  it('ranges program ids over their grid axes and a constant-bounded loop over its steps', () => {
    expect(pids.map((v) => ranges.get(v.id))).toEqual([
      { first: 0, last: 1, step: 1 },
      { first: 0, last: 2, step: 1 },
    ]);
    expect(ranges.get(loop.inductionVar.id)).toEqual({ first: 0, last: 64, step: 32 });
  });

  it('proves a tile inside only where every value keeps it inside, and word-aligned only where every step is', () => {
    const [pm, pn] = pids as [IndexValue, IndexValue];
    const rows = mul(pm, 128);
    const cols = mul(pn, 128);
    expect(alwaysInside([rows, cols], [128, 128], [256, 384], ranges)).toBe(true);
    expect(alwaysInside([rows, cols], [128, 128], [250, 384], ranges)).toBe(false);
    expect(alwaysInside([rows, cols], [128, 128], [256, 384], ranges, 8)).toBe(true);
    expect(alwaysInside([rows, mul(pn, 132)], [128, 128], [256, 400], ranges, 8)).toBe(false);
    // A value without a range (e.g. from a table) proves nothing.
    expect(alwaysInside([rows, cols], [128, 128], [256, 384], new Map())).toBe(false);
  });

  it('emits no edge path and no scratch for a GEMM whose tiles all lie inside; keeps both where one does not', () => {
    const exact = wgsl(256, 256, 64);
    expect(exact).not.toMatch(/inside|sh_spill|whole/);
    const edge = wgsl(256, 200, 64);
    expect(edge).toMatch(/let whole = /);
    expect(edge).toMatch(/var<workgroup> sh_spill/);
    // B's rows are whole 16-byte words and its tiles start on one: fetched by words, masked at the edge.
    expect(edge).toMatch(/pv_b_0\[0\] = vec4<u32>\(\); if \(r >= 0 && r < 64 && c >= 0 && c < 200\)/);
    expect(edge).not.toMatch(/inside/);
    // Rows of 100 halves are not whole words: B goes element by element, zeros outside the tensor.
    expect(wgsl(256, 100, 64)).toMatch(/var x = f16\(0\);/);
  });
});
