/**
 * QKV rounded to f16 for attention on tensor cores: the QKV GEMM accumulates and writes f32 (its
 * subgroup-matrix path stores accumulators in the result type only), and subgroup matrices multiply
 * halves, so this rank-local step rounds the whole [S, 3·H/R] once (every rank's attention reads all
 * S rows of its heads). It moves about 6 bytes an element, against attention's far longer compute.
 */
import { buildModule, mul, type Module } from '@syncopate/ir';

export interface QkvHalfShape {
  readonly seq: number;
  /** Columns of QKV: 3·H/R. */
  readonly cols: number;
  readonly ranks: number;
  /** Rows per tile: a divisor of S. */
  readonly rowBlock: number;
  readonly colBlock: number;
}

/** Tensors `QKV` [S, cols] (f32) and `QKVH` [S, cols] (f16, QKV rounded to nearest). */
export function qkvHalfKernel(s: QkvHalfShape, name = 'qkv_half'): Module {
  const { seq: S, cols, ranks: R, rowBlock: bm, colBlock: bn } = s;
  return buildModule(name, { ranks: R }, (mb) => {
    const QKV = mb.tensor('QKV', [S, cols], 'f32');
    const QKVH = mb.tensor('QKVH', [S, cols], 'f16');
    mb.kernel(name, [S / bm, Math.ceil(cols / bn)], (kb) => {
      const at = [mul(kb.programId(0, 'pm'), bm), mul(kb.programId(1, 'pn'), bn)];
      kb.store(QKVH, at, kb.cast(kb.load(QKV, at, [bm, bn], 'qkv'), 'f16', 'qkv_h'));
    });
  });
}
