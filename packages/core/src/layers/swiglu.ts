/**
 * The FFN's gated activation, SiLU(gate)·up, on one rank's columns: GU [S, 2·F/R] holds the rank's
 * gate columns then its up columns (the gate/up GEMM's output, f32), A [S, F/R] the product, in the
 * element type the down GEMM reads. Every row: each rank holds all S rows of its columns.
 */
import { buildModule, mul, add, type DType, type Module } from '@syncopate/ir';

export interface SwigluShape {
  readonly seq: number;
  /** F/R: the rank's gate (and up) columns. */
  readonly localFfn: number;
  readonly ranks: number;
  readonly rowBlock: number;
  readonly colBlock: number;
  /** Element type of A. */
  readonly dtype: DType;
}

/** Tensors `GU` [S, 2·F/R] (f32) and `A` [S, F/R] (dtype). */
export function swigluKernel(s: SwigluShape, name = 'swiglu'): Module {
  const { seq: S, localFfn: Fr, ranks: R, rowBlock: bm, colBlock: bn, dtype } = s;
  return buildModule(name, { ranks: R }, (mb) => {
    const GU = mb.tensor('GU', [S, 2 * Fr], 'f32');
    const A = mb.tensor('A', [S, Fr], dtype);
    mb.kernel(name, [Math.ceil(S / bm), Math.ceil(Fr / bn)], (kb) => {
      const pm = kb.programId(0, 'pm');
      const pn = kb.programId(1, 'pn');
      const row = mul(pm, bm);
      // Where Fr is not a multiple of bn the last tile's gate reads into up's columns; those lanes
      // lie past A's columns and are not stored.
      const gate = kb.load(GU, [row, mul(pn, bn)], [bm, bn], 'gate');
      const up = kb.load(GU, [row, add(mul(pn, bn), Fr)], [bm, bn], 'up');
      const a = kb.mulTile(kb.unary('silu', gate, 'act'), up, 'a');
      kb.store(A, [row, mul(pn, bn)], dtype === 'f32' ? a : kb.cast(a, dtype, 'a_out'));
    });
  });
}
