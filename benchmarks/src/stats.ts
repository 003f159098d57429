/** Median and spread of repeated timings, and the inputs timed runs use. */
export interface Summary {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly runs: number;
}

export function summarize(samples: readonly number[]): Summary {
  const s = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  const median = s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { median, min: s[0]!, max: s[s.length - 1]!, runs: s.length };
}

/** Zero-filled inputs, every tensor per rank: timing does not depend on the values (correctness is checked separately). */
export function zeroInputs(tensors: readonly { name: string; shape: readonly number[] }[], ranks: number): Record<string, Float32Array[]> {
  return Object.fromEntries(tensors.map((t) => [t.name, Array.from({ length: ranks }, () => new Float32Array(t.shape.reduce((a, b) => a * b, 1)))]));
}
