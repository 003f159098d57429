/**
 * The subgroup-matrix GEMM kernel run on the software adapter, which has no subgroup matrices: the
 * same WGSL with each matrix held whole by every invocation (CodegenOptions.target.emulate,
 * backends/src/wgsl/subgroup-matrix-ops.ts). It checks what the H100 cannot be asked about from
 * here: the kernel's offsets, staging (zero fill, padded rows, both copies, the matrix and element
 * paths), subgroup blocks and edge stores, at shapes that cut tiles in M, N and K. Small integers:
 * every product and sum is exact, so the answer must be too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SubgroupMatrixTarget } from '@syncopate/backends';
import { gemmKernel } from '@syncopate/ir';
import type { DeviceHandle } from '@syncopate/runtime';
import { compileOrThrow } from '../src/api/compile.js';
import { FusedSession, lowerToWgsl, openDevice } from '../src/tools/run.js';
import { gemmAccumulate, gemmTolerance, mulberry32, smallIntegers } from '../src/workloads/index.js';

let device: DeviceHandle;
beforeAll(async () => {
  device = await openDevice();
});
afterAll(() => device?.close());

const F16_F32 = { componentType: 'f16', resultComponentType: 'f32' } as const;

interface Case {
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly block: readonly [number, number, number];
  readonly target: SubgroupMatrixTarget;
}

function integers(length: number, seed: number): Float32Array {
  const next = smallIntegers(mulberry32(seed), -3, 3);
  return Float32Array.from({ length }, next);
}

async function run(c: Case): Promise<{ got: Float32Array; want: Float32Array; wgsl: string }> {
  const kernel = gemmKernel({ m: c.m, n: c.n, k: c.k, blockM: c.block[0], blockN: c.block[1], blockK: c.block[2], dtype: 'f16' }, { name: 'gemm' });
  const fused = lowerToWgsl(compileOrThrow(kernel, { ranks: 1, chunks: [] }), { target: c.target });
  const A = integers(c.m * c.k, 1);
  const B = integers(c.k * c.n, 2);
  const session = await FusedSession.open(device, fused, { A: [A], B: [B], C: [new Float32Array(c.m * c.n).fill(Number.NaN)] }, { read: ['C'], timeoutMs: 230_000 });
  try {
    await session.run();
    const [got] = await session.read('C');
    const want = new Float32Array(c.m * c.n);
    gemmAccumulate(want, A, B, c);
    return { got: got!, want, wgsl: fused.wgsl };
  } finally {
    session.destroy();
  }
}

const emulated = (config: { M: number; N: number; K: number }, more: Partial<SubgroupMatrixTarget> = {}): SubgroupMatrixTarget => ({
  config: { ...F16_F32, ...config },
  emulate: true,
  // Four invocations per "subgroup": the emulation computes every matrix in each of them.
  subgroupSize: 4,
  ...more,
});

describe('the subgroup-matrix GEMM, emulated on the software adapter', () => {
  // Matrices of 4x4x4 and 4x2x4 rather than the H100's 16x16x16: the kernel's indexing is the same
  // function of M, N and K, and lavapipe compiles the emulation's loops in seconds instead of minutes
  // (with 8x8x8 matrices a cold shader cache took over two minutes a case on a 2-core machine).
  const cases: [string, Case][] = [
    // Edges in M and N; A's and B's rows whole 16-byte words, so inside tiles are fetched by words
    // through the vec4 views (the next cases have the edge in K and a partial last round of words).
    ['16x16x8 tiles, 2x2 subgroups, an edge in M and N', { m: 50, n: 40, k: 24, block: [16, 16, 8], target: emulated({ M: 4, N: 4, K: 4 }) }],
    // K = 40 in steps of 16: the last step's tiles cut K and go element by element; 8 subgroups of 2x1
    // matrices, so A's 16x16 tile is 32 words for 32 invocations and B's too, and one copy only.
    ['an edge in K, 8 subgroups, one copy', { m: 32, n: 16, k: 40, block: [16, 16, 16], target: emulated({ M: 4, N: 4, K: 4 }, { subgroups: [2, 4], workgroupBytes: 3000 }) }],
    // 16x16x8 tiles with 8 subgroups: A's tile is 16 words for 32 invocations (a guarded partial round).
    ['fewer words than invocations', { m: 32, n: 32, k: 16, block: [16, 16, 8], target: emulated({ M: 4, N: 4, K: 4 }, { subgroups: [2, 4] }) }],
    // Odd K and N: rows not 16-byte aligned, so every tile is copied element by element and C goes through the scratch.
    ['odd K and N: element copies, every store masked', { m: 37, n: 23, k: 19, block: [16, 16, 8], target: emulated({ M: 4, N: 4, K: 4 }) }],
    // Every tile inside, proved at compile time: no edge path, no runtime test, no store scratch; 4 K steps.
    ['every tile inside: no edge path', { m: 32, n: 48, k: 32, block: [16, 16, 8], target: emulated({ M: 4, N: 4, K: 4 }) }],
    // Matrices narrower than tall (as the H100's 16x8x16): B's matrices are 4x2, the subgroup grid differs.
    ['a 4x2x4 configuration', { m: 20, n: 22, k: 12, block: [16, 16, 8], target: emulated({ M: 4, N: 2, K: 4 }) }],
  ];

  it.each(cases)('%s', async (_, c) => {
    const { got, want, wgsl } = await run(c);
    expect(wgsl).toContain('emulated');
    expect(wgsl).not.toContain('subgroupMatrixLoad');
    // Rows of whole words: inside tiles come through the views.
    if (c.k % 8 === 0 && c.n % 8 === 0) expect(wgsl).toContain('= v4_A[');
    const wholeStores = c.m % c.block[0] === 0 && c.n % c.block[1] === 0;
    expect(wgsl.includes('sh_spill'), 'the store scratch only where a tile of C may cross an edge').toBe(!wholeStores);
    // Rows of whole words: every tile goes by words, masked where one may cross an edge; no element path.
    const words = c.k % 8 === 0 && c.n % 8 === 0;
    const edges = !(wholeStores && c.k % c.block[2] === 0);
    if (words) expect(wgsl.includes('inside'), 'no runtime inside test: tiles start on words').toBe(false);
    if (words) expect(wgsl.includes('] = vec4<u32>(); if ('), 'masked words only where a tile may cross an edge').toBe(edges);
    let worst = 0;
    for (let i = 0; i < want.length; i++) worst = Math.max(worst, Number.isNaN(got[i]!) ? Infinity : Math.abs(got[i]! - want[i]!));
    expect(worst).toBe(0);
  }, 240_000);

  it('takes one staging copy when two do not fit the workgroup memory it is given', () => {
    const kernel = gemmKernel({ m: 64, n: 64, k: 64, blockM: 32, blockN: 32, blockK: 32, dtype: 'f16' }, { name: 'gemm' });
    const compiled = compileOrThrow(kernel, { ranks: 1, chunks: [] });
    expect(lowerToWgsl(compiled, { target: emulated({ M: 16, N: 16, K: 16 }) }).wgsl).toContain('2 staging copies');
    expect(lowerToWgsl(compiled, { target: emulated({ M: 16, N: 16, K: 16 }, { workgroupBytes: 7000 }) }).wgsl).toContain('1 staging copy');
    expect(() => lowerToWgsl(compiled, { target: emulated({ M: 16, N: 16, K: 16 }, { workgroupBytes: 2000 }) })).toThrow(/need \d+ bytes of workgroup memory; the target allows 2000/);
  });
});

describe('gemmTolerance', () => {
  it('is 0 for integer inputs while every partial sum is exact in f32, and grows as K² beyond', () => {
    expect(gemmTolerance(4096, 2, 2, true)).toBe(0);
    expect(gemmTolerance((2 ** 24) / 4, 2, 2, true)).toBeGreaterThan(0);
    // Uniform [-1, 1] inputs at K = 1024: γ_K · K ≈ 1024² · 2^-23 ≈ 0.125.
    expect(gemmTolerance(1024, 1, 1, false)).toBeCloseTo(0.125, 3);
    expect(gemmTolerance(2048, 1, 1, false) / gemmTolerance(1024, 1, 1, false)).toBeCloseTo(4, 2);
  });
});
