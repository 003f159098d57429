/** The run report as text: what `syncopate run` prints and the browser example shows. */
import type { RunReport } from './run-report.js';
import { layoutRows } from './process-report.js';

/** Milliseconds with two decimals (`0.45`, `117.21`). */
export function formatMs(ms: number): string {
  return ms.toFixed(2);
}

/** `rows` as `label  value` lines, the values lined up. */
export function alignedTable(rows: readonly (readonly [string, string])[]): string {
  const width = Math.max(0, ...rows.map(([label]) => label.length));
  return rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join('\n');
}

/** The report of `syncopate run` as label/value rows (the CLI, the browser example). */
export function runReportRows(r: RunReport): [string, string][] {
  const { m, n, k } = r.shape;
  return [
    ['workload', r.workload],
    ['shape', `${m}x${n}x${k} (MxNxK)`],
    ['ranks', String(r.ranks)],
    ['devices', String(r.devices)],
    ...(r.processes ? layoutRows(r.processes) : []),
    ['backend', r.backend],
    ['plan', r.plan],
    ['order', r.order],
    ['dtype', r.dtype],
    ['verified', r.verified ? 'yes' : 'NO'],
    ['max abs error', String(r.maxAbsError)],
    ['fused', `${formatMs(r.fusedMs)} ms (${r.timing})`],
    ['adapter', r.adapter + (r.robustness ? '' : ' (no bounds checks)')],
  ];
}

/** The report of `syncopate run`, one field a line. */
export function formatRunReport(r: RunReport): string {
  return alignedTable(runReportRows(r));
}
