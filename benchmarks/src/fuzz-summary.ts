/** The fuzz's results as a table: per workload and device count, how many cases came out each way. */
import { failed, OUTCOMES, type FuzzResult, type Outcome } from './fuzz-runner.js';

type Counts = Record<Outcome, number> & { cases: number; slowestMs: number };

const empty = (): Counts => ({ cases: 0, slowestMs: 0, ...(Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>) });

function count(results: readonly FuzzResult[], key: (r: FuzzResult) => string): Map<string, Counts> {
  const rows = new Map<string, Counts>();
  for (const r of results) {
    for (const k of [key(r), 'all']) {
      const row = rows.get(k) ?? empty();
      row.cases++;
      row[r.outcome]++;
      row.slowestMs = Math.max(row.slowestMs, r.ms);
      rows.set(k, row);
    }
  }
  return rows;
}

/** A markdown table, rows by workload and devices, the total last; then every failed case's command and error. */
export function summaryTable(results: readonly FuzzResult[]): string {
  const rows = count(results, (r) => `${r.case.workload}, ${r.case.devices} device${r.case.devices > 1 ? 's' : ''}`);
  const keys = [...rows.keys()].filter((k) => k !== 'all').sort();
  const header = ['case', 'cases', ...OUTCOMES, 'slowest (s)'];
  const line = (cells: readonly (string | number)[]) => `| ${cells.join(' | ')} |`;
  const body = [...keys, 'all'].map((k) => {
    const c = rows.get(k)!;
    return line([k, c.cases, ...OUTCOMES.map((o) => c[o]), (c.slowestMs / 1000).toFixed(1)]);
  });
  const out = [line(header), line(header.map(() => '---')), ...body];
  const failures = results.filter((r) => failed(r.outcome));
  if (failures.length > 0) {
    out.push('', 'failed:');
    for (const r of failures) out.push(`- #${r.index} ${r.outcome}: ${r.command}${r.case.block ? ` (block ${r.case.block.m}x${r.case.block.n}x${r.case.block.k})` : ''}: ${r.error ?? ''} ${(r.message ?? `max error ${r.maxAbsError}`).split('\n')[0]}`);
  }
  return out.join('\n');
}
