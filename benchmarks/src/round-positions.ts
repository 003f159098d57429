/**
 * Whether a part's time hangs on its place in a round: for each two-device row of suite.jsonl files
 * (the suite's or bench's JSON lines), each variant's median time over the rounds where it ran first
 * and over the rest, and their ratio; then the median ratio per variant over all rows.
 *
 *   node dist/round-positions.mjs results/.../suite.jsonl [...]
 *
 * A variant's place in each round is its `positions` (recorded since 2026-11-27, session of 03:44);
 * in files written before, it is rebuilt from the rounds' seed (core's roundOrders) with the six parts
 * in the order benchVariantsInTurn opened them then.
 */
import { readFileSync } from 'node:fs';
import { BENCH_VARIANTS, roundOrders, summarize, type BenchReport } from '@syncopate/core';

/** The parts of a bench's rounds, in the order they were opened (bench.ts, timeInTurn). */
const BENCH_PARTS = ['sequential', 'comm', 'decomposed', 'fused', 'fused-comm', 'compute'];

const median = (xs: readonly number[]): number => (xs.length === 0 ? NaN : summarize(xs).median);

function main(): void {
  const files = process.argv.slice(2);
  if (files.length === 0) throw new Error('usage: round-positions.mjs SUITE.jsonl [...]');
  const ratios = new Map<string, number[]>(BENCH_VARIANTS.map((v) => [v, []]));
  for (const file of files) {
    for (const line of readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
      const parsed = JSON.parse(line) as { report?: BenchReport } & BenchReport;
      const r = parsed.report ?? parsed;
      if (r.devices < 2 || !r.variants?.sequential?.rounds) continue;
      const cells = BENCH_VARIANTS.map((v) => {
        const { rounds, positions } = r.variants[v];
        const places = positions ?? roundOrders(BENCH_PARTS, rounds!.length).map((order) => order.indexOf(v));
        const first = rounds!.filter((_, i) => places[i] === 0);
        const later = rounds!.filter((_, i) => places[i] !== 0);
        const ratio = median(first) / median(later);
        if (Number.isFinite(ratio)) ratios.get(v)!.push(ratio);
        return `${v} first ${median(first).toFixed(3)} (${first.length}) later ${median(later).toFixed(3)} ${ratio.toFixed(2)}x`;
      });
      console.log(`${r.workload} ${r.dtype} R${r.ranks} D${r.devices}: ${cells.join(' | ')}`);
    }
  }
  for (const [v, rs] of ratios) console.log(`${v}: first / later, median over ${rs.length} rows ${median(rs).toFixed(3)}x`);
}

main();
