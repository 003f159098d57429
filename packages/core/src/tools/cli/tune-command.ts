/**
 * `syncopate tune`: time the fused variant of each workload at every candidate GEMM tile, order and
 * chunk count (autotune.ts says how they are searched), keep the fastest verified one in the tune
 * cache, and print the trials. `bench --tuned` reads the cache through `tunedRun` (tuning first when
 * it has no entry).
 */
import { openDevices, type DeviceHandle } from '@syncopate/runtime';
import { blockLabel, DEFAULT_TUNE_CHUNKS, DEFAULT_TUNE_ORDERS, tune, tuneKey, type TuneResult, type TuneTrial } from '../autotune.js';
import { sameBlock } from '../tune-blocks.js';
import { TuneCache } from './tune-cache.js';
import { adapterLabel } from '../run.js';
import { warmupBusyMsFor } from '../stats.js';
import type { RunOptions } from '../run-report.js';
import { configurations, type SweepOptions, type TuneCommand } from './bench-args.js';
import type { CliIO } from './commands.js';
import { formatMs } from './report.js';

/** `warmupBusyMs`: GPU time to keep the device busy before timing (warmupBusyMsFor the devices). */
type TuneTiming = Pick<SweepOptions, 'runs' | 'warmup'> & Partial<Pick<SweepOptions, 'orders' | 'chunksPerRank'>> & { readonly warmupBusyMs?: number };

async function tuneOne(run: RunOptions, handles: readonly DeviceHandle[], cmd: TuneTiming, io: CliIO): Promise<TuneResult> {
  return tune({
    ...run,
    handles,
    orders: cmd.orders ?? DEFAULT_TUNE_ORDERS,
    chunksPerRank: cmd.chunksPerRank ?? DEFAULT_TUNE_CHUNKS,
    timedRuns: cmd.runs,
    warmupRuns: cmd.warmup,
    warmupBusyMs: cmd.warmupBusyMs ?? 0,
    onTrial: (t, { done, total }) => io.progress?.(`tuning ${run.workload}: ${done}/${total} (tile ${blockLabel(t.block)}, ${t.order}, ${t.chunksPerRank} chunks/rank${t.phasing ? `, ${t.phasing} phasing` : ''}${t.gather ? `, ${t.gather} gather` : ''}${t.reduction ? `, ${t.reduction} reduction` : ''})`),
  });
}

/** `run` at the tile, order and chunk count the cache holds for it on these devices; tuned now if absent. */
export async function tunedRun(run: RunOptions, handles: readonly DeviceHandle[], cmd: Pick<TuneTiming, 'warmup' | 'warmupBusyMs'>, io: CliIO): Promise<RunOptions> {
  const cache = TuneCache.open();
  const key = tuneKey(adapterLabel(handles[0]!, handles.length), run);
  let result = cache.get(key);
  if (result === undefined) {
    io.err(`syncopate: no tuned choice for ${run.workload} on this adapter in ${cache.file}; tuning it now`);
    result = await tuneOne(run, handles, { runs: 10, ...cmd }, io);
    cache.put(result);
  }
  const { order, chunksPerRank, block, phasing, gather, reduction } = result.best;
  // an entry cached before tiles were tuned has no block: the workload keeps its own
  return { ...run, order, chunksPerRank, ...(block && { block }), ...(phasing && { phasing }), ...(gather && { gather }), ...(reduction && { reduction }) };
}

function trialTime(t: TuneTrial): string {
  if (t.error !== undefined) return 'FAILED';
  return t.verified ? `${formatMs(t.ms)} ms` : 'WRONG RESULT';
}

function formatTune(r: TuneResult, file: string): string {
  const rows = r.trials.map((t) => {
    const best = t.order === r.best.order && t.chunksPerRank === r.best.chunksPerRank && sameBlock(t.block, r.best.block) && t.phasing === r.best.phasing && t.gather === r.best.gather && t.reduction === r.best.reduction;
    // The phasing trial says how its rounds compared the two (autotune.ts, phasingTrial).
    const rounds = t.overlapInterval ? `  (overlap vs this in ${t.rounds === undefined ? '' : `${t.rounds} `}rounds ${t.overlapRatio!.toFixed(2)}x, ${t.overlapInterval[0].toFixed(2)}–${t.overlapInterval[1].toFixed(2)})` : '';
    const plan = `${t.gather ? `  (${t.gather} gather)` : ''}${t.reduction ? `  (${t.reduction} reduction)` : ''}`;
    const note = t.error !== undefined ? `  ${t.error.split('\n')[0]}` : `${plan}${rounds}${best ? '  <- best' : ''}`;
    return `  ${blockLabel(t.block).padEnd(11)} ${t.order.padEnd(14)} ${String(t.chunksPerRank).padStart(11)}  ${(t.phasing ?? 'overlap').padEnd(10)}  ${trialTime(t).padStart(12)}${note}`;
  });
  const header = `  ${'tile'.padEnd(11)} ${'order'.padEnd(14)} ${'chunks/rank'.padStart(11)}  ${'phasing'.padEnd(10)}  ${'fused'.padStart(12)}`;
  return [r.key, header, ...rows, `  stored in ${file}`].join('\n');
}

export async function tuneCommandRun(cmd: TuneCommand, io: CliIO): Promise<number> {
  const handles = await openDevices(cmd.devices ?? 1, { device: { requiredLimits: 'adapter-max' }, ...(cmd.robustness === false && { gpu: { robustness: false } }) });
  const cache = TuneCache.open();
  const results: TuneResult[] = [];
  try {
    for (const run of configurations(cmd)) {
      const result = await tuneOne(run, handles, { ...cmd, warmupBusyMs: warmupBusyMsFor(handles) }, io);
      cache.put(result);
      results.push(result);
    }
  } finally {
    io.progress?.('');
    handles.forEach((h) => h.close());
  }
  io.out(cmd.json ? JSON.stringify({ cache: cache.file, results }, null, 2) : results.map((r) => formatTune(r, cache.file)).join('\n\n'));
  return 0;
}
