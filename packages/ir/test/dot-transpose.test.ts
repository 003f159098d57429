import { describe, expect, it } from 'vitest';
import { buildModule, IRParseError, IRVerifyError, parse, print, verify } from '../src/index.js';

const text = (kShape: string) => `module @qk ranks(1) {
  tensor @Q : f32[16, 8] replicated
  tensor @K : f32[32, 8] replicated
  tensor @S : f32[16, 32] replicated
  kernel @k grid(1) order(row-major) {
    %q = load @Q[0, 0] : tile<16x8xf32>
    %k = load @K[0, 0] : tile<${kShape}xf32>
    %z = constant 0 : tile<16x32xf32>
    %s = dot %q, %k, %z transpose_b : tile<16x32xf32>
    store %s, @S[0, 0]
  }
}
`;

describe('dot with transpose_b', () => {
  it('builds, prints and parses back: acc + a·bᵀ for b [N,K]', () => {
    const m = buildModule('qk', { ranks: 1 }, (mb) => {
      const Q = mb.tensor('Q', [16, 8], 'f32');
      const K = mb.tensor('K', [32, 8], 'f32');
      const S = mb.tensor('S', [16, 32], 'f32');
      mb.kernel('k', [1], (kb) => {
        const q = kb.load(Q, [0, 0], [16, 8], 'q');
        const k = kb.load(K, [0, 0], [32, 8], 'k');
        kb.store(S, [0, 0], kb.dotTransposeB(q, k, kb.zeros([16, 32], 'f32', 'z'), 's'));
      });
    });
    expect(print(m)).toBe(text('32x8'));
    const back = parse(print(m));
    expect(print(back)).toBe(print(m));
    const dot = back.kernel.body.find((op) => op.op === 'dot');
    expect(dot?.op === 'dot' && dot.transposeB).toBe(true);
    expect(verify(back)).toEqual([]);
  });

  it('checks the shared K dimension against b\'s columns', () => {
    const diagnostics = verify(parse(text('32x4')));
    expect(diagnostics.map((d) => d.code)).toContain('verify/shape');
    expect(diagnostics.map((d) => d.message).join('\n')).toContain('inner dimensions differ: %q is 16x8, %k is 32x4 (used transposed, transpose_b)');
    // b's rows are the product's columns: a 16x8 result is wrong for a 32x8 b.
    const wrongResult = text('32x8').replace('%s = dot %q, %k, %z transpose_b : tile<16x32xf32>', '%s = dot %q, %k transpose_b : tile<16x8xf32>');
    expect(verify(parse(wrongResult)).map((d) => d.message).join('\n')).toContain('%q·%kᵀ is 16x32');
    // The builder's module goes through the same check.
    expect(() =>
      buildModule('bad', { ranks: 1 }, (mb) => {
        const Q = mb.tensor('Q', [16, 8], 'f32');
        const K = mb.tensor('K', [32, 4], 'f32');
        const S = mb.tensor('S', [16, 32], 'f32');
        mb.kernel('k', [1], (kb) => {
          const q = kb.load(Q, [0, 0], [16, 8], 'q');
          const k = kb.load(K, [0, 0], [32, 4], 'k');
          kb.store(S, [0, 0], kb.dotTransposeB(q, k as never, undefined, 's'));
        });
      }),
    ).toThrow(IRVerifyError);
  });

  it('is a word after the operands; anything else there is a parse error', () => {
    expect(() => parse(text('32x8').replace('transpose_b', 'transpose_a'))).toThrow(IRParseError);
  });
});
