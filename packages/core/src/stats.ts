/** Median and spread of repeated timings. */
export interface Summary {
  readonly median: number;
  /** NaN where the runs were timed only together (no per-run spread). */
  readonly min: number;
  readonly max: number;
  readonly runs: number;
}

/** `perRun: false`: the samples are one batch's mean repeated, so min and max would be made up: NaN. */
export function summarize(samples: readonly number[], perRun = true): Summary {
  if (!perRun) return { ...summarize(samples), min: NaN, max: NaN };
  const s = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  const median = s.length === 0 ? NaN : s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { median, min: s[0] ?? NaN, max: s[s.length - 1] ?? NaN, runs: s.length };
}

/** Warm-up batches at most: enough for a GPU's clocks to settle, bounded should they never. */
const MAX_WARMUP_BATCHES = 8;
/** A warm-up batch whose median is within this of the previous one's means the clocks have settled. */
const SETTLED = 0.02;

/**
 * Runs `batch` (a batch of timed runs, their times) until two batches in a row agree within 2%, at
 * most 8 times. An H100 takes a few hundred milliseconds of work to raise its clocks from idle; a
 * fixed count of short warm-up runs left variants (and a tile sweep) timed at idle clocks.
 */
export async function warmUntilSettled(batch: () => Promise<readonly number[]>): Promise<void> {
  let previous = NaN;
  for (let i = 0; i < MAX_WARMUP_BATCHES; i++) {
    const median = summarize(await batch()).median;
    if (Math.abs(median - previous) <= SETTLED * previous) return;
    previous = median;
  }
}
