import { describe, expect, it } from 'vitest';
import { buildModule, gemmKernel, IRBuildError, IRVerifyError, mul, type Diagnostic } from '../src/index.js';

describe('builder', () => {
  it('builds the local GEMM with a loop carrying the accumulator', () => {
    const m = gemmKernel({ m: 128, n: 128, k: 64 });
    expect(m.kernel.grid).toEqual([2, 2]);
    const ops = m.kernel.body.map((o) => o.op);
    expect(ops).toEqual(['program_id', 'program_id', 'constant', 'for', 'store']);
    const loop = m.kernel.body[3];
    if (loop?.op !== 'for') throw new Error('expected a loop');
    expect(loop.body.map((o) => o.op)).toEqual(['load', 'load', 'dot', 'yield']);
    expect(loop.results[0]?.type).toEqual({ kind: 'tile', shape: [64, 64], dtype: 'f32' });
    expect(Object.isFrozen(m.kernel.body)).toBe(true);
  });

  it('gives every value a unique name', () => {
    const m = buildModule('names', {}, (mb) => {
      const A = mb.tensor('A', [4, 4], 'f32');
      mb.kernel('k', [1], (kb) => {
        const x = kb.load(A, [0, 0], [4, 4], 'x');
        const y = kb.unary('exp', x, 'x');
        kb.store(A, [0, 0], y);
      });
    });
    const names = m.kernel.body.flatMap((o) => ('result' in o ? [o.result.name] : []));
    expect(names).toEqual(['x', 'x_1']);
  });

  it('rejects an operand that does not broadcast', () => {
    expect(() =>
      buildModule('bad', {}, (mb) => {
        const A = mb.tensor('A', [4, 4], 'f32');
        mb.kernel('k', [1], (kb) => {
          const x = kb.load(A, [0, 0], [4, 4]);
          const y = kb.load(A, [0, 0], [4, 2]);
          kb.binary('add', x, y);
        });
      }),
    ).toThrow(IRBuildError);
  });

  it('rejects ill-shaped dot operands at compile time', () => {
    const build = () =>
      buildModule('types', {}, (mb) => {
        const A = mb.tensor('A', [64, 64], 'f32');
        const H = mb.tensor('H', [64, 64], 'f16');
        mb.kernel('k', [1], (kb) => {
          const a = kb.load(A, [0, 0], [64, 32]);
          const b = kb.load(A, [0, 0], [32, 16]);
          const bad = kb.load(A, [0, 0], [16, 64]);
          const h = kb.load(H, [0, 0], [32, 16]);
          const acc = kb.zeros([64, 16]);
          kb.store(A, [0, mul(0, 1)], kb.dot(a, b, acc));
          // @ts-expect-error inner dimensions differ (32 vs 16)
          kb.dot(a, bad);
          // @ts-expect-error operands of different dtypes
          kb.dot(a, h);
          // @ts-expect-error accumulator of the wrong shape
          kb.dot(a, b, kb.zeros([64, 64]));
        });
      });
    expect(build).toThrow(IRVerifyError);
    let diagnostics: readonly Diagnostic[] = [];
    try {
      build();
    } catch (e) {
      if (e instanceof IRVerifyError) diagnostics = e.diagnostics;
    }
    expect(diagnostics).toContainEqual(
      expect.objectContaining({ code: 'verify/shape', op: 'dot', message: expect.stringMatching(/inner dimensions differ: %\w+ is 64x32, %\w+ is 16x64/) }),
    );
    expect(diagnostics.map((d) => d.op)).toEqual(['dot', 'dot', 'dot']);
  });
});

describe('builder chunks', () => {
  it('fill in kind and backend even when spelled out as undefined, and leave the spec unfrozen', () => {
    const region = { lo: [0], hi: [4] };
    const m = buildModule('chunks', { ranks: 2 }, (mb) => {
      const A = mb.tensor('A', [8], 'f32');
      mb.chunk({ tensor: 'A', region, src: 0, dst: 1, step: 0, kind: undefined, backend: undefined });
      mb.kernel('k', [1], (kb) => kb.store(A, [0], kb.load(A, [0], [4])));
    });
    expect(m.chunks[0]).toMatchObject({ kind: 'copy', backend: 'auto' });
    expect(Object.isFrozen(region.lo)).toBe(false);
  });
});
