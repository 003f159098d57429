/**
 * RMSNorm over the rows a rank owns: Y[i, :] = X[i, :] · rsqrt(mean(X[i, :]²) + ε) · γ. Every tensor
 * is rank-local (replicated: each rank computes on its own copy), and rank r normalises only its
 * rows [r·S/R, (r+1)·S/R): the rest of its copy of Y is where the next kernel's all-gather lands.
 */
import { add, buildModule, mul, type DType, type Module, type TileValue } from '@syncopate/ir';

export interface RmsNormShape {
  readonly seq: number;
  readonly hidden: number;
  readonly ranks: number;
  readonly eps: number;
  /** Rows per tile: a divisor of S/R. */
  readonly rowBlock: number;
  readonly colBlock: number;
  /** Element type of X and γ (read), and of Y (written). */
  readonly dtype: DType;
}

type Matrix = TileValue<readonly [number, number], 'f32'>;
type Column = TileValue<readonly [number, 1], 'f32'>;

/**
 * Tensors `X` [S, H], `gamma` [1, H], `Y` [S, H]. One tile per `rowBlock` rows: a first pass over
 * H in column blocks sums the squares (in f32), a second scales and stores.
 */
export function rmsNormKernel(s: RmsNormShape, name = 'rms_norm'): Module {
  const { seq: S, hidden: H, ranks: R, eps, rowBlock: bm, colBlock: bn, dtype } = s;
  const shard = S / R;
  return buildModule(name, { ranks: R }, (mb) => {
    const X = mb.tensor('X', [S, H], dtype);
    const G = mb.tensor('gamma', [1, H], dtype);
    const Y = mb.tensor('Y', [S, H], dtype);
    mb.kernel(name, [shard / bm], (kb) => {
      const rank = kb.rankId('rank');
      const pm = kb.programId(0, 'pm');
      const row = add(mul(rank, shard), mul(pm, bm));
      const f32 = (x: TileValue<readonly [number, number], DType>, n: string): Matrix => (x.type.dtype === 'f32' ? (x as Matrix) : kb.cast(x, 'f32', n));
      const [sumSq] = kb.for(0, H, bn, [kb.zeros([bm, 1], 'f32', 'sum_sq')], (c, [acc]) => {
        const x = f32(kb.load(X, [row, c], [bm, bn], 'x'), 'x32');
        return [kb.add(acc, kb.reduce('sum', kb.mulTile(x, x, 'sq'), 1, 'row_sq'), 'sum_sq_next') as Column] as const;
      }, 'c');
      const meanSq = kb.mulTile(sumSq, kb.constant(1 / H, [1, 1], 'f32', 'inv_h'), 'mean_sq');
      const inv = kb.unary('rsqrt', kb.add(meanSq, kb.constant(eps, [1, 1], 'f32', 'eps'), 'var_eps'), 'inv_rms');
      kb.for(0, H, bn, [], (c) => {
        const x = f32(kb.load(X, [row, c], [bm, bn], 'xs'), 'xs32');
        const g = f32(kb.load(G, [0, c], [1, bn], 'g'), 'g32');
        const y = kb.mulTile(kb.mulTile(x, inv, 'normed'), g, 'y');
        kb.store(Y, [row, c], dtype === 'f32' ? y : kb.cast(y, dtype, 'y_out'));
        return [] as const;
      }, 'c2');
    });
  });
}
