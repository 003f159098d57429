/** What the CLI prints: the run report as a table, and timing statistics. */
import type { RunReport } from '../workloads/index.js';

/** Milliseconds with two decimals (`0.45`, `117.21`). */
export function formatMs(ms: number): string {
  return ms.toFixed(2);
}

/** `rows` as `label  value` lines, the values lined up. */
export function alignedTable(rows: readonly (readonly [string, string])[]): string {
  const width = Math.max(0, ...rows.map(([label]) => label.length));
  return rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join('\n');
}

/** The report of `syncopate run`, one field a line. */
export function formatRunReport(r: RunReport): string {
  const { m, n, k } = r.shape;
  return alignedTable([
    ['workload', r.workload],
    ['shape', `${m}x${n}x${k} (MxNxK)`],
    ['ranks', String(r.ranks)],
    ['devices', String(r.devices)],
    ['backend', r.backend],
    ['order', r.order],
    ['dtype', r.dtype],
    ['verified', r.verified ? 'yes' : 'NO'],
    ['max abs error', String(r.maxAbsError)],
    ['fused', `${formatMs(r.fusedMs)} ms (${r.timing})`],
    ['adapter', r.adapter],
  ]);
}

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
