/** What the CLI prints: the run report as a table, and timing statistics. */
export { alignedTable, formatMs, formatRunReport, runReportRows } from '../report-format.js';

/** The q-quantile (0 <= q <= 1) of ascending `sorted`, interpolating linearly between neighbours. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const at = q * (sorted.length - 1);
  const lo = Math.floor(at);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (at - lo);
}

export interface TimingStats {
  readonly medianMs: number;
  readonly p10Ms: number;
  readonly p90Ms: number;
}

export function timingStats(samples: readonly number[]): TimingStats {
  const sorted = [...samples].sort((a, b) => a - b);
  return { medianMs: quantile(sorted, 0.5), p10Ms: quantile(sorted, 0.1), p90Ms: quantile(sorted, 0.9) };
}
