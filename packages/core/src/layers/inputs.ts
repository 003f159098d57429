/**
 * Seeded inputs for a tensor-parallel layer: X uniform in [−1, 1), each weight uniform in
 * [−1, 1)/√fan-in (so every GEMM's output stays about as large as its input and the softmax's scores
 * within a few units), RMSNorm weights 1 ± 0.1, the same on every rank (a replicated weight). Each
 * (seed, tensor, rank) has its own stream (`streamSeed`). For f16 every value is rounded to the
 * nearest half first, so the GPU and the CPU reference see the same numbers.
 */
import { fromHalfBits, toHalfBits } from '../api/half.js';
import { mulberry32, streamSeed } from '../workloads/index.js';
import { tpLayerShape, type TpLayerConfig } from './config.js';
import type { TpLayerInputs } from './tp-layer.js';

export function tpLayerInputs(config: TpLayerConfig, seed = 1): TpLayerInputs {
  const s = tpLayerShape(config);
  const { hidden: H, ffn: F, localHidden: Hr, localFfn: Fr, shard, ranks } = s;
  const round = (a: Float32Array) => (s.dtype === 'f16' ? fromHalfBits(toHalfBits(a)) : a);
  const uniform = (name: string, size: number, scale: number, center = 0, sameOnEveryRank = false) =>
    Array.from({ length: ranks }, (_, rank) => {
      const next = mulberry32(streamSeed(seed, name, sameOnEveryRank ? 0 : rank));
      // A plain loop: Float32Array.from with a mapping function took minutes at Llama-7B sizes.
      const values = new Float32Array(size);
      for (let i = 0; i < size; i++) values[i] = center + scale * (2 * next() - 1);
      return round(values);
    });
  return {
    x: uniform('x', shard * H, 1),
    gamma1: uniform('gamma1', H, 0.1, 1, true),
    wqkv: uniform('wqkv', H * 3 * Hr, 1 / Math.sqrt(H)),
    wo: uniform('wo', Hr * H, 1 / Math.sqrt(H)),
    gamma2: uniform('gamma2', H, 0.1, 1, true),
    wgu: uniform('wgu', H * 2 * Fr, 1 / Math.sqrt(H)),
    wd: uniform('wd', Fr * H, 1 / Math.sqrt(F)),
  };
}
