/**
 * ring-attn in f16: what the kernel rounds, and the CPU reference that rounds there too.
 *
 * Q, K and V are f16 (the inputs are f16-exact); Q·Kᵀ multiplies halves exactly in f32 and sums in
 * f32; the online softmax (m, l, α, the accumulator) runs in f32; P = exp(S − m) is rounded to f16
 * for P·V, as attention kernels do to run both products on tensor cores; l sums the unrounded P. O is
 * written in f32, as the f16 GEMM workloads write C. Because P is rounded against the running max m
 * of the blocks seen so far, the reference must replay the kernel's online softmax in its block order
 * (D-row blocks from the end of the sequence down) to round the same values.
 */
import { f16round } from '@petamoriken/float16';

/**
 * softmax(q·Kᵀ/√d)·V for every row of `q` [rows, d], in float64 except that each block's P is
 * rounded to f16 before it multiplies V, blocks of `block` rows visited from row seq − block down to 0.
 */
export function attentionReferenceF16(q: Float32Array, k: ArrayLike<number>, v: ArrayLike<number>, rows: number, seq: number, d: number, block: number): Float32Array {
  const out = new Float32Array(rows * d);
  const scale = Math.fround(1 / Math.sqrt(d));
  const scores = new Float64Array(block);
  const acc = new Float64Array(d);
  for (let i = 0; i < rows; i++) {
    let [m, l] = [-Infinity, 0];
    acc.fill(0);
    for (let j0 = seq - block; j0 >= 0; j0 -= block) {
      let blockMax = -Infinity;
      for (let b = 0; b < block; b++) {
        let s = 0;
        for (let c = 0; c < d; c++) s += q[i * d + c]! * k[(j0 + b) * d + c]!;
        scores[b] = s * scale;
        blockMax = Math.max(blockMax, scores[b]!);
      }
      const mNew = Math.max(m, blockMax);
      const alpha = Math.exp(m - mNew);
      l *= alpha;
      for (let c = 0; c < d; c++) acc[c]! *= alpha;
      for (let b = 0; b < block; b++) {
        const p = Math.exp(scores[b]! - mNew);
        l += p;
        const rounded = f16round(p);
        for (let c = 0; c < d; c++) acc[c]! += rounded * v[(j0 + b) * d + c]!;
      }
      m = mNew;
    }
    for (let c = 0; c < d; c++) out[i * d + c] = acc[c]! / l;
  }
  return out;
}
