/**
 * The cost model against suite results already measured: reads the suite.jsonl files a device run
 * wrote (one line per case: its run options and bench report), fits and predicts as the suite does
 * (core's modelBench), and prints the table and, per row, how far the fused prediction is from the
 * measured time. No device needed: the model can be changed and checked against every recorded run.
 *
 *   node dist/model-suite.mjs benchmarks/results/h100-2026-11-25b/final-suite.jsonl [more.jsonl ...]
 */
import { readFileSync } from 'node:fs';
import { costModelTable, modelBench, type BenchReport, type RunOptions } from '@syncopate/core';

interface Line {
  readonly section: string;
  readonly run: RunOptions;
  readonly report: BenchReport;
}

function readSuiteLines(files: readonly string[]): Line[] {
  return files.flatMap((f) =>
    readFileSync(f, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as Line)
      .filter((l) => l.section === 'suite'),
  );
}

const isMain = process.argv[1] !== undefined && /model-suite\.(m?js|ts)$/.test(process.argv[1]);
if (isMain) {
  const lines = readSuiteLines(process.argv.slice(2));
  const configs = modelBench(
    lines.map((l) => l.report),
    lines.map((l) => l.run),
  );
  console.log(costModelTable(configs));
  let worst = 0;
  for (const c of configs) {
    for (const r of c.rows) {
      worst = Math.max(worst, Math.abs(r.error.fused));
      console.log(`${c.key.padEnd(40)} fused ${r.report.variants.fused.ms.median.toFixed(3)} ms, model ${r.predicted.fused.toFixed(3)} (${(100 * r.error.fused).toFixed(1)}%)`);
    }
  }
  console.log(`largest fused error: ${(100 * worst).toFixed(1)}% over ${configs.length} configurations`);
}
