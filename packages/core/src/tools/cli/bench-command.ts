/**
 * `syncopate bench`: each workload three ways (sequential, decomposed, fused) plus its compute alone,
 * for every order and chunk count asked for (or the tuned ones), on devices opened once. Prints a
 * Markdown table with the summary and the cost model (or JSON); `--out DIR` writes bench.json,
 * bench.md, speedup.svg, and the trace and timeline of one more fused run.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchTable, benchWorkload, formatBenchSummary, summarizeBench, type BenchReport } from '../bench.js';
import { costModelTable, modelBench } from '../cost-report.js';
import { speedupSvg, timelineSvg, traceTimeline } from '../plots.js';
import { warmupBusyMsFor } from '../stats.js';
import { traceRun, type ChromeTrace } from '../trace.js';
import type { RunOptions } from '../run-report.js';
import { benchRuns, configurations, type BenchCommand } from './bench-args.js';
import { asJob, type CliIO } from './commands.js';
import { openRunDevices } from '../run.js';
import { adapterBufferLimits, checkRunFits } from './limits.js';
import { checkTraceFile, writeTrace } from './outputs.js';
import { tunedRun } from './tune-command.js';
import { UsageError } from '../../workloads/index.js';

/** Steps per benchmark row: the three variants and the compute-only run. */
const STEPS_PER_ROW = 4;

function benchRowLabelOf(r: RunOptions): string {
  return `${r.workload} ${r.shape.m}x${r.shape.n}x${r.shape.k}, ${r.ranks} ranks`;
}

function progressBar(done: number, total: number, what: string): string {
  const width = 24;
  const filled = Math.round((done / total) * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} ${what}`;
}

export async function benchCommandRun(cmd: BenchCommand, io: CliIO): Promise<number> {
  let runs = benchRuns(cmd);
  if (cmd.trace !== undefined) checkTraceFile(cmd.trace);
  const limits = await adapterBufferLimits();
  if (limits !== undefined) for (const r of runs) checkRunFits(r, limits);
  // Under mpirun, this process's block of the devices (a device a process by default).
  const { devices, processes } = asJob({ devices: cmd.devices }, io.processes, cmd.processes);
  const handles = await openRunDevices(devices ?? 1, processes, cmd.robustness === false ? { gpu: { robustness: false } } : {});
  const ours = handles.flatMap((h) => (h ? [h] : []));
  if (processes && (cmd.tuned || cmd.trace !== undefined || cmd.out !== undefined)) {
    ours.forEach((h) => h.close());
    throw new UsageError('bench under mpirun times the variants; --tuned, --trace and --out are not supported there yet');
  }
  const reports: BenchReport[] = [];
  if (cmd.tuned) {
    const tuned: RunOptions[] = [];
    for (const run of configurations(cmd)) tuned.push(await tunedRun(run, ours, { warmup: cmd.warmup, warmupBusyMs: warmupBusyMsFor(ours) }, io));
    runs = tuned;
  }
  const total = runs.length * STEPS_PER_ROW;
  let done = 0;
  let trace: ChromeTrace | undefined;
  try {
    for (const run of runs) {
      io.progress?.(progressBar(done, total, `${run.workload} ${run.order} c${run.chunksPerRank}`));
      const report = await benchWorkload({
        ...run,
        handles,
        ...(processes && { processes }),
        runs: cmd.runs,
        warmup: cmd.warmup,
        // Without a busy second first, the H100 ran these at idle clocks: 3 to 4x the suite's times (call 15).
        warmupBusyMs: warmupBusyMsFor(ours),
        onVariant: (variant) => io.progress?.(progressBar(++done, total, `${run.workload} ${variant}`)),
      });
      reports.push(report);
    }
    if (cmd.trace !== undefined || cmd.out !== undefined) {
      io.progress?.(`tracing one fused run of ${runs[0]!.workload}`);
      trace = (await traceRun({ ...runs[0]!, handles, timedRuns: 1, warmupRuns: cmd.warmup })).trace;
    }
  } finally {
    io.progress?.('');
    ours.forEach((h) => h.close());
  }
  const summary = summarizeBench(reports);
  const costModel = modelBench(reports, runs);
  const json = { command: 'bench', adapter: reports[0]?.adapter ?? 'unknown', date: new Date().toISOString(), runs: cmd.runs, warmup: cmd.warmup, summary, reports, costModel };
  const markdown = `${benchTable(reports)}\n\n${formatBenchSummary(summary)}\n\nCost model (measured, then predicted and its error):\n\n${costModelTable(costModel)}`;
  if (cmd.out !== undefined) {
    mkdirSync(cmd.out, { recursive: true });
    writeFileSync(join(cmd.out, 'bench.json'), `${JSON.stringify(json, null, 2)}\n`);
    writeFileSync(join(cmd.out, 'bench.md'), `${markdown}\n`);
    writeFileSync(join(cmd.out, 'speedup.svg'), `${speedupSvg(reports, `Fused speedup on ${json.adapter}`)}\n`);
    writeTrace(join(cmd.out, 'trace.json'), trace!);
    writeFileSync(join(cmd.out, 'timeline.svg'), `${timelineSvg(traceTimeline(trace!), `One fused run of ${benchRowLabelOf(runs[0]!)}`)}\n`);
  }
  if (cmd.trace !== undefined) {
    writeTrace(cmd.trace, trace!);
    io.err(`syncopate: wrote the trace of one fused run of ${runs[0]!.workload} into ${cmd.trace} (open it in https://ui.perfetto.dev)`);
  }
  io.out(cmd.json ? JSON.stringify(json, null, 2) : markdown);
  return summary.allVerified ? 0 : 1;
}
