import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { parse } from '@syncopate/ir';
import { emitFusedKernel } from '../src/index.js';
import { kernelLayout } from '../src/wgsl/layout.js';

/** One step of attention on one tile: scores Q·Kᵀ, a row softmax, then P·V. */
const attentionStep = `module @attention_step ranks(1) {
  tensor @Q : f32[32, 16] replicated
  tensor @K : f32[16, 16] replicated
  tensor @V : f32[16, 16] replicated
  tensor @O : f32[32, 16] replicated
  kernel @step grid(2) order(row-major) {
    %pm = program_id 0
    %q = load @Q[16*%pm, 0] : tile<16x16xf32>
    %k = load @K[0, 0] : tile<16x16xf32>
    %s = dot %q, %k transpose_b : tile<16x16xf32>
    %mx = reduce max %s axis 1 : tile<16x1xf32>
    %shifted = map sub %s, %mx : tile<16x16xf32>
    %p = map exp %shifted : tile<16x16xf32>
    %l = reduce sum %p axis 1 : tile<16x1xf32>
    %v = load @V[0, 0] : tile<16x16xf32>
    %pv = dot %p, %v : tile<16x16xf32>
    %o = map div %pv, %l : tile<16x16xf32>
    store %o, @O[16*%pm, 0]
  }
}
`;

describe('attention ops in WGSL', () => {
  it('matches the golden kernel for one attention step', () => {
    const fused = emitFusedKernel(parse(attentionStep));
    if (E.isLeft(fused)) throw new Error(fused.left.map((d) => d.message).join('\n'));
    const file = join(import.meta.dirname, 'golden', 'attention-step.wgsl');
    if (process.env.UPDATE_GOLDEN === '1') writeFileSync(file, fused.right.wgsl);
    expect(existsSync(file)).toBe(true);
    expect(fused.right.wgsl).toBe(readFileSync(file, 'utf8'));
  });

  it('lays out the staged operands: Kᵀ and Q K-major, P copied from registers, a 16x16-word reduce scratch', () => {
    const { layout } = kernelLayout(parse(attentionStep));
    const m = parse(attentionStep);
    const id = (name: string) => {
      for (const op of m.kernel.body) if ('result' in op && op.result.name === name) return op.result.id;
      throw new Error(name);
    };
    expect(layout).toBeDefined();
    expect([...layout!.transposed].sort()).toEqual([id('q'), id('k'), id('p')].sort());
    expect([...layout!.registerOperands]).toEqual([id('p')]);
    expect([...layout!.bOperands].sort()).toEqual([id('k'), id('v')].sort());
    // 16 rows x 16 threads along a row.
    expect(layout!.reduceScratch).toBe(256);
    const wgsl = emitFusedKernel(m);
    if (E.isLeft(wgsl)) throw new Error('emit failed');
    expect(wgsl.right.wgsl).toContain('var<workgroup> sh_p: array<f32, 256>; // 16x16 from registers, stored K-major');
    expect(wgsl.right.wgsl).toContain('var<workgroup> wg_reduce: array<f32, 256>;');
  });

  it('refuses a register dot operand that is not the whole register tile, and a reduce of a staged tile, naming them', () => {
    const module = parse(`module @bad ranks(1) {
  tensor @A : f32[16, 16] replicated
  tensor @B : f32[8, 16] replicated
  tensor @C : f32[16, 16] replicated
  tensor @R : f32[16, 1] replicated
  kernel @k grid(1) order(row-major) {
    %a = load @A[0, 0] : tile<16x8xf32>
    %b = load @B[0, 0] : tile<8x16xf32>
    %c = dot %a, %b : tile<16x16xf32>
    store %c, @C[0, 0]
    %r = reduce sum %a axis 1 : tile<16x1xf32>
    store %r, @R[0, 0]
    %n = map neg %c : tile<16x16xf32>
    %a2 = map neg %a : tile<16x8xf32>
    %d = dot %a2, %b : tile<16x16xf32>
    store %d, @C[0, 0]
  }
}
`);
    const fused = emitFusedKernel(module);
    expect(E.isLeft(fused)).toBe(true);
    const found = E.isLeft(fused) ? fused.left.map((d) => [d.code, d.op, d.value]) : [];
    expect(found).toContainEqual(['codegen/unsupported', 'reduce', 'a']);
    expect(found).toContainEqual(['codegen/unsupported', 'dot', 'a2']);
  });
});
