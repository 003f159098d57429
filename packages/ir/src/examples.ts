/**
 * Example kernels built with the builder: the local GEMM of the design, used by tests, docs and the demo.
 */
import { add, mul } from './affine.js';
import { buildModule, partialSum, replicated, sharded } from './builder.js';
import type { DType, Module } from './types.js';

export interface GemmShape {
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly blockM?: number;
  readonly blockN?: number;
  readonly blockK?: number;
  readonly dtype?: DType;
}

/**
 * `C[M,N] = A[M,K] · B[K,N]` as a local tiled kernel. With `distribute: 'ag'`, `A` is sharded on rows
 * (an all-gather feeds it); with `'rs'`, each rank's `C` is a partial sum (a reduce-scatter drains it).
 * Tensors that are not distributed are rank-local: every rank holds its own full copy.
 */
export function gemmKernel(
  shape: GemmShape,
  options: { ranks?: number; name?: string; distribute?: 'ag' | 'rs' } = {},
): Module {
  const { m, n, k, blockM = 64, blockN = 64, blockK = 32, dtype = 'f32' } = shape;
  const ranks = options.ranks ?? 1;
  const ag = options.distribute === 'ag';
  const rs = options.distribute === 'rs';
  return buildModule(options.name ?? 'gemm', { ranks }, (mb) => {
    const A = mb.tensor('A', [m, k], dtype, ag ? sharded(0) : replicated());
    const B = mb.tensor('B', [k, n], dtype, replicated());
    const C = mb.tensor('C', [m, n], 'f32', rs ? partialSum() : replicated());
    mb.kernel('gemm', [Math.ceil(m / blockM), Math.ceil(n / blockN)], (kb) => {
      const pm = kb.programId(0, 'pm');
      const pn = kb.programId(1, 'pn');
      const [acc] = kb.for(0, k, blockK, [kb.zeros([blockM, blockN], 'f32', 'acc')], (kk, [acc]) => {
        const a = kb.load(A, [mul(pm, blockM), kk], [blockM, blockK], 'a');
        const b = kb.load(B, [kk, mul(pn, blockN)], [blockK, blockN], 'b');
        return [kb.dot(a, b, acc, 'd')];
      });
      kb.store(C, [mul(pm, blockM), mul(pn, blockN)], acc);
    });
  });
}

export interface A2aGemmShape {
  readonly ranks: number;
  /** Rows every rank receives (the all-to-all's splits may be uneven per pair, not per destination). */
  readonly rowsPerRank: number;
  readonly hidden: number;
  readonly out: number;
  readonly blockM?: number;
  readonly blockN?: number;
  readonly blockK?: number;
}

/**
 * Expert GEMM after an all-to-all token dispatch (MoE): `Y = T · W` on the rows each rank received.
 * `T [ranks·rowsPerRank, hidden]` holds tokens destination-major (as `allToAllLayout` lays them out),
 * so rank d's rows start at d·rowsPerRank: the one place a local kernel needs `rank_id`. Every rank
 * holds its own `T` (the rows it sends, and those it receives), `W` and `Y`. `rowsPerRank` should be a
 * multiple of `blockM`, so that no tile reads into the next rank's rows.
 */
export function a2aGemmKernel(shape: A2aGemmShape, name = 'a2a_gemm'): Module {
  const { ranks, rowsPerRank, hidden, out, blockM = 32, blockN = 32, blockK = 16 } = shape;
  return buildModule(name, { ranks }, (mb) => {
    const T = mb.tensor('T', [ranks * rowsPerRank, hidden], 'f32');
    const W = mb.tensor('W', [hidden, out], 'f32');
    const Y = mb.tensor('Y', [ranks * rowsPerRank, out], 'f32');
    mb.kernel('expert_gemm', [Math.ceil(rowsPerRank / blockM), Math.ceil(out / blockN)], (kb) => {
      const rank = kb.rankId('rank');
      const pm = kb.programId(0, 'pm');
      const pn = kb.programId(1, 'pn');
      const row = add(mul(rank, rowsPerRank), mul(pm, blockM));
      const [acc] = kb.for(0, hidden, blockK, [kb.zeros([blockM, blockN], 'f32', 'acc')], (k, [acc]) => {
        const t = kb.load(T, [row, k], [blockM, blockK], 't');
        const w = kb.load(W, [k, mul(pn, blockN)], [blockK, blockN], 'w');
        return [kb.dot(t, w, acc, 'd')];
      });
      kb.store(Y, [row, mul(pn, blockN)], acc);
    });
  });
}
