/**
 * The residual add over the rows a rank owns: Out = X + Y, where Y is a reduce-scatter's output (f32,
 * its sum complete in the rank's own rows only). Rank-local tensors; rank r writes rows
 * [r·S/R, (r+1)·S/R) of its copy of Out.
 */
import { add, buildModule, mul, type DType, type Module, type TileValue } from '@syncopate/ir';

export interface ResidualShape {
  readonly seq: number;
  readonly hidden: number;
  readonly ranks: number;
  /** Rows per tile: a divisor of S/R. */
  readonly rowBlock: number;
  readonly colBlock: number;
  /** Element type of X and Out (Y is f32). */
  readonly dtype: DType;
}

/** Tensors `X` [S, H] (dtype), `Y` [S, H] (f32), `Out` [S, H] (dtype). */
export function residualKernel(s: ResidualShape, name = 'residual'): Module {
  const { seq: S, hidden: H, ranks: R, rowBlock: bm, colBlock: bn, dtype } = s;
  const shard = S / R;
  return buildModule(name, { ranks: R }, (mb) => {
    const X = mb.tensor('X', [S, H], dtype);
    const Y = mb.tensor('Y', [S, H], 'f32');
    const Out = mb.tensor('Out', [S, H], dtype);
    mb.kernel(name, [shard / bm, Math.ceil(H / bn)], (kb) => {
      const rank = kb.rankId('rank');
      const pm = kb.programId(0, 'pm');
      const pn = kb.programId(1, 'pn');
      const at = [add(mul(rank, shard), mul(pm, bm)), mul(pn, bn)];
      const x = kb.load(X, at, [bm, bn], 'x');
      const x32 = x.type.dtype === 'f32' ? (x as TileValue<readonly [number, number], 'f32'>) : kb.cast(x, 'f32', 'x32');
      const sum = kb.add(x32, kb.load(Y, at, [bm, bn], 'y'), 'sum');
      kb.store(Out, at, dtype === 'f32' ? sum : kb.cast(sum, dtype, 'sum_out'));
    });
  });
}
