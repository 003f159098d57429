/**
 * The cost model against suite results already measured: reads the suite.jsonl files a device run
 * wrote (one line per case: its run options and bench report), fits and predicts as the suite does
 * (core's modelBench), and prints the table and, per row, how far the fused prediction is from the
 * measured time. No device needed: the model can be changed and checked against every recorded run.
 * With `--queue-probe` (a queue-overlap-probe log of the same call), also each two-device row's
 * one-queue floor (queue-floor.ts).
 *
 *   node dist/model-suite.mjs [--queue-probe log.txt] benchmarks/results/h100-2026-11-27n/one-device-suite.jsonl [more.jsonl ...]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { costModelTable, formatBenchMs, modelBench, type BenchReport, type RunOptions } from '@syncopate/core';
import { queueFloor, readDmaRates } from './queue-floor.js';

export interface SuiteLine {
  readonly section: string;
  readonly run: RunOptions;
  readonly report: BenchReport;
}

export function readSuiteLines(files: readonly string[]): SuiteLine[] {
  return files.flatMap((f) =>
    readFileSync(f, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as SuiteLine)
      .filter((l) => l.section === 'suite'),
  );
}

const isMain = process.argv[1] !== undefined && /model-suite\.(m?js|ts)$/.test(process.argv[1]);
if (isMain) {
  const { values, positionals } = parseArgs({ options: { 'queue-probe': { type: 'string' } }, allowPositionals: true });
  const lines = readSuiteLines(positionals);
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
  if (values['queue-probe']) printQueueFloors(lines, values['queue-probe']);
}

/**
 * Per two-device row, the least the fused variant could take: the longer of its communication alone
 * (the host's path, which compute cannot shorten; its own, where chunks within a device move inside its
 * kernel) and compute alone + its busiest device's DMA (one queue a device); sequential over it is the
 * most overlap could give.
 */
function printQueueFloors(lines: readonly SuiteLine[], probe: string): void {
  const rates = readDmaRates(probe);
  const gbps = (msPerByte: number) => (1 / msPerByte / 1e6).toFixed(1);
  console.log(`\nOne queue a device (read-back ${gbps(rates.readBackMsPerByte)} GB/s, upload ${gbps(rates.uploadMsPerByte)} GB/s, from ${probe})\n`);
  console.log('| row | dtype | ranks | compute alone | fused comm alone | DMA (busiest device) | compute + DMA | least: max(comm, compute + DMA) | sequential | fused | sequential / least | fused / least |');
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  const bounds: number[] = [];
  for (const { run, report } of lines) {
    if (report.devices < 2 || !report.overlap) continue;
    const { dmaMs, floorMs } = queueFloor(run, report, rates);
    const comm = report.overlap.fusedCommOnlyMs ?? report.overlap.commOnlyMs;
    const least = Math.max(comm, floorMs);
    const [seq, fused] = [report.variants.sequential.ms.median, report.variants.fused.ms.median];
    const { m, n, k } = run.shape;
    const cells = [report.overlap.computeOnlyMs.median, comm, dmaMs, floorMs, least, seq, fused].map(formatBenchMs);
    console.log(`| ${run.workload} ${m}x${n}x${k} | ${run.dtype} | ${run.ranks} | ${cells.join(' | ')} | ${(seq / least).toFixed(2)}x | ${(fused / least).toFixed(2)}x |`);
    bounds.push(seq / least);
  }
  const geomean = Math.exp(bounds.reduce((a, b) => a + Math.log(b), 0) / bounds.length);
  if (bounds.length > 0) console.log(`\ngeometric mean of sequential / least over ${bounds.length} rows (the most overlap could give): ${geomean.toFixed(2)}x`);
}
