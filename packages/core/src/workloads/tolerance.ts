/**
 * How far a GEMM computed on the GPU may be from the exact product: f16 (or f32) inputs, f32
 * accumulation, in any order (subgroup matrices sum in an order of the hardware's choosing).
 *
 * A product of two f16 values is exact in f32 (11 + 11 significant bits <= 24), so all the error is
 * the accumulation's: for K terms at most γ_K·Σ|a_i·b_i|, γ_K = K·u / (1 − K·u) (Higham, Accuracy and
 * Stability of Numerical Algorithms, §3.1), with u = 2^-23, one f32 ulp rather than half of one, to
 * cover tensor cores that truncate. The bound grows with K because every addition may round once.
 * Where the inputs are integers and every partial sum stays below 2^24, each sum is an integer that
 * f32 holds exactly: the tolerance is 0, and a result off by anything is wrong.
 */
const U = 2 ** -23;

export function gemmTolerance(k: number, maxAbsA: number, maxAbsB: number, integers: boolean): number {
  const sumOfProducts = k * maxAbsA * maxAbsB;
  if (integers && sumOfProducts < 2 ** 24) return 0;
  const gamma = (k * U) / (1 - k * U);
  return gamma * sumOfProducts;
}
