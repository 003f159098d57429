/** Median and spread of repeated timings (from core), and the inputs timed runs use. */
export { summarize, type Summary } from '@syncopate/core';

/** Zero-filled inputs, every tensor per rank: timing does not depend on the values (correctness is checked separately). */
export function zeroInputs(tensors: readonly { name: string; shape: readonly number[] }[], ranks: number): Record<string, Float32Array[]> {
  return Object.fromEntries(tensors.map((t) => [t.name, Array.from({ length: ranks }, () => new Float32Array(t.shape.reduce((a, b) => a * b, 1)))]));
}
