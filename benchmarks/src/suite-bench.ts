/**
 * The workload suite on a GPU: every workload three ways (sequential, decomposed, fused) plus its
 * compute alone, at GPU-sized shapes, with ranks sharing one device and with ranks on two devices
 * (peer-copy); a tile-order ablation and a chunk-size sweep for ag-gemm and gemm-rs; the cost model
 * fitted and projected; the Chrome trace and timeline of one fused run. Every timed kernel is the
 * checked one: each variant's first run, at the timed shape, tile and target, is compared with the CPU
 * reference on VERIFY_ROWS rows of its output spread over it (all columns; the full reference at GPU
 * shapes would take minutes), before its warm-up and timed runs.
 *
 *   node dist/suite.mjs [--quick | --size S] [--out DIR] [--only ag-gemm,gemm-rs] [--dtype f16] [--target simt|subgroup-matrix|auto]
 *                       [--ranks 2,4,8] [--reduction ring|one-shot] [--gather ring|one-shot] [--order chunk-arrival|row-major|grouped] [--no-sweeps]
 *                       [--devices 1,2 | --one-device] [--two-device-ranks 2,4] [--runs N] [--no-trace] [--tune-phasing] [copier flags]
 *
 * --ranks sets the rank counts of every workload on one device (default 2, 4, 8 for the GEMMs, 4 for
 * the others); --reduction the plan of gemm-rs and gemv-ar, --gather that of ag-gemm and ring-attn (default: the workloads' own); --order the
 * tile order of the suite's rows (default chunk-arrival; the ablation runs row-major and grouped too);
 * --devices which rows run: 1 (ranks sharing one device, = --one-device), 2 (ranks on two devices:
 * the GEMMs' 2 ranks, the others' 4), or both (the default); --two-device-ranks the GEMMs' rank
 * counts on two devices (default 2); --runs the timed runs a variant (default
 * 20, 5 with --quick); the copier flags (copier-args.ts: --ring, --read-ahead, --beside-compute,
 * --min-piece-kib, --max-piece-mib) the host copier's options (its defaults otherwise); --tune-phasing
 * runs each row's fused variant at the phasing the tuner keeps (tunePhasing below: overlap, or the
 * sequential variant where overlap loses), the trials in the row's suite.jsonl line.
 *
 * With --dtype f16 and --target auto (the default) the GEMMs take the subgroup-matrix (tensor core) path where the adapter has it.
 *
 * Writes suite.jsonl (a line per case as it ends), suite.json, suite.md, speedup.svg, trace.json and timeline.svg into DIR.
 */
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { COPIER_FLAGS, copierOptions } from './copier-args.js';
import { parseArgs } from 'node:util';
import {
  benchTable,
  benchWorkload,
  costModelTable,
  formatBenchSummary,
  getWorkload,
  modelBench,
  speedupSvg,
  summarizeBench,
  timelineSvg,
  traceRun,
  traceTimeline,
  tune,
  WARMUP_BUSY_MS,
  WORKLOAD_NAMES,
  type BenchReport,
  type BlockShape,
  type TuneOptions,
  type RunOptions,
  type RunOrder,
  type GatherPlan,
  type ReductionPlan,
  type RunTarget,
  type WorkloadName,
} from '@syncopate/core';
import { openDevices, type DeviceHandle } from '@syncopate/runtime';
import { GEMM_BLOCK, gpuShape } from './suite-shapes.js';

/** Output rows checked per timed kernel (see RunWorkloadOptions.verifyRows). */
const VERIFY_ROWS = 16;

interface Case {
  readonly workload: WorkloadName;
  readonly ranks: number;
  readonly handles: DeviceHandle[];
  readonly order?: RunOrder;
  readonly chunksPerRank?: number;
  readonly section: 'suite' | 'ablation' | 'sweep';
}

/**
 * The phasing the tuner keeps for a row (--tune-phasing): the fused variant at the
 * row's own tile, order and chunk count, timed with transfers beside compute, then against the
 * sequential variant in alternating rounds (autotune.ts, phasingTrial), each verified, before the
 * row's own rounds.
 */
function tunePhasing(row: Omit<TuneOptions, 'orders' | 'chunksPerRank' | 'blocks'> & { readonly order: RunOrder; readonly chunksPerRank: number; readonly block?: BlockShape; readonly backend: string }) {
  // The row's backend is left out: the tuner gives each candidate its own (candidateBackend). Its plans
  // are named (the ring gather unless --gather, the placement's reduction unless --reduction), so the
  // tuner tries no other: the row's variants all keep the row's plan, only the phasing is tuned.
  const { order, chunksPerRank, block, backend: _backend, ...rest } = row;
  const reduction = rest.reduction ?? getWorkload(rest.workload).defaultReduction?.(rest.devices ?? 1);
  return tune({ ...rest, gather: rest.gather ?? 'ring', ...(reduction && { reduction }), orders: [order], chunksPerRank: [chunksPerRank], blocks: [block], verifyRows: VERIFY_ROWS, warmupBusyMs: WARMUP_BUSY_MS });
}

/** How the two-device rows' peer copies crossed the host, for the heading (none on one device). */
function hostCopyNote(reports: readonly BenchReport[]): string {
  const kinds = [...new Set(reports.flatMap((r) => (r.hostCopy ? [r.hostCopyStores ? `${r.hostCopy} (${r.hostCopyStores} stores)` : r.hostCopy] : [])))];
  return kinds.length ? `, host copy ${kinds.join(' and ')}` : '';
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { quick: { type: 'boolean' }, out: { type: 'string' }, only: { type: 'string' }, size: { type: 'string' }, dtype: { type: 'string' }, target: { type: 'string' }, 'no-sweeps': { type: 'boolean' }, 'one-device': { type: 'boolean' }, devices: { type: 'string' }, runs: { type: 'string' }, ranks: { type: 'string' }, reduction: { type: 'string' }, gather: { type: 'string' }, order: { type: 'string' }, 'no-trace': { type: 'boolean' }, 'two-device-ranks': { type: 'string' }, 'tune-phasing': { type: 'boolean' }, ...COPIER_FLAGS } });
  const out = values.out ?? process.env.OUT ?? '.';
  const quick = values.quick ?? false;
  const size = values.size ? Number(values.size) : quick ? 1024 : 4096;
  const dtype: 'f16' | 'f32' = values.dtype === 'f16' ? 'f16' : 'f32';
  const target = (values.target ?? 'auto') as RunTarget;
  const names = values.only ? (values.only.split(',') as WorkloadName[]) : WORKLOAD_NAMES;
  const rankCounts = values.ranks?.split(',').map(Number);
  const reduction = values.reduction === undefined ? {} : { reduction: values.reduction as ReductionPlan };
  const gather = values.gather === undefined ? {} : { gather: values.gather as GatherPlan };
  const suiteOrder = (values.order ?? 'chunk-arrival') as RunOrder;
  // The host copier's options for the two-device rows, to compare copiers in one call.
  const peerCopy = copierOptions(values);
  // The GEMMs' rank counts on two devices: 2 (one a GPU) by default; 4 puts a ring's forwards on each.
  const twoDeviceGemmRanks = values['two-device-ranks']?.split(',').map(Number) ?? [2];
  const deviceCounts = (values['one-device'] ? '1' : (values.devices ?? '1,2')).split(',').map(Number);
  const devices = await openDevices(2, { device: { requiredLimits: 'adapter-max' } });
  devices.forEach((d) => console.log(`device ${d.index}: ${d.placement.description}`));
  const one = devices.slice(0, 1);
  const cases: Case[] = [];
  for (const workload of names) {
    const gemm = workload === 'ag-gemm' || workload === 'gemm-rs';
    if (deviceCounts.includes(1)) for (const ranks of rankCounts ?? (gemm ? [2, 4, 8] : [4])) cases.push({ workload, ranks, handles: one, order: suiteOrder, section: 'suite' });
    if (deviceCounts.includes(2)) for (const ranks of gemm ? twoDeviceGemmRanks : [4]) cases.push({ workload, ranks, handles: devices, order: suiteOrder, section: 'suite' });
    if (!gemm || values['no-sweeps'] || !deviceCounts.includes(1)) continue;
    for (const order of ['row-major', 'grouped'] as const) cases.push({ workload, ranks: 4, handles: one, order, section: 'ablation' });
    for (const chunksPerRank of [2, 4]) cases.push({ workload, ranks: 4, handles: one, chunksPerRank, section: 'sweep' });
  }
  mkdirSync(out, { recursive: true });
  // One line per case as it finishes: a run cut short still leaves what it measured.
  const jsonl = join(out, 'suite.jsonl');
  writeFileSync(jsonl, '');
  const reports: { section: Case['section']; report: BenchReport; run: RunOptions }[] = [];
  const failures: string[] = [];
  try {
    for (const c of cases) {
      const label = `${c.section} ${c.workload} R${c.ranks} D${c.handles.length} ${c.order ?? 'chunk-arrival'} c${c.chunksPerRank ?? 1}`;
      const base = {
        workload: c.workload,
        ranks: c.ranks,
        dtype,
        order: c.order ?? ('chunk-arrival' as const),
        chunksPerRank: c.chunksPerRank ?? 1,
        seed: 1,
        handles: c.handles,
        devices: c.handles.length,
        backend: 'auto' as const,
        target,
        ...reduction,
        ...gather,
        peerCopy,
      };
      try {
        const shape = gpuShape(c.workload, c.ranks, size);
        const block = c.workload === 'ag-gemm' || c.workload === 'gemm-rs' ? GEMM_BLOCK[dtype] : {};
        const tuned = values['tune-phasing'] ? await tunePhasing({ ...base, shape, ...block }) : undefined;
        const phasing = tuned?.best.phasing;
        const report = await benchWorkload({ ...base, shape, ...block, ...(phasing && { phasing }), verifyRows: VERIFY_ROWS, runs: values.runs ? Number(values.runs) : quick ? 5 : 20, warmup: 10, warmupBusyMs: WARMUP_BUSY_MS });
        reports.push({ section: c.section, report, run: { ...base, shape, ...(phasing && { phasing }) } });
        console.log(JSON.stringify({ section: c.section, ...report }));
        const trials = tuned?.trials.map((t) => ({ phasing: t.phasing ?? 'overlap', ms: t.ms, verified: t.verified, ...(t.overlapInterval && { overlapRatio: t.overlapRatio, overlapInterval: t.overlapInterval, rounds: t.rounds }) }));
        appendFileSync(jsonl, `${JSON.stringify({ section: c.section, run: { ...base, handles: undefined, shape }, report, ...(trials && { phasingTrials: trials }) })}\n`);
      } catch (e) {
        // One workload failing must not lose the others' figures: record it and go on.
        const message = `${label}: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`;
        failures.push(message);
        console.error(message);
        appendFileSync(jsonl, `${JSON.stringify({ section: c.section, failure: message })}\n`);
      }
    }
    let trace;
    if (!values['no-trace']) try {
      trace = (await traceRun({ workload: 'ag-gemm', ranks: 4, shape: gpuShape('ag-gemm', 4, size), ...GEMM_BLOCK[dtype], dtype, order: 'chunk-arrival', backend: 'auto', seed: 1, handles: devices, devices: 2, verify: false, timedRuns: 3, warmupRuns: 3 })).trace;
    } catch (e) {
      failures.push(`trace: ${e instanceof Error ? e.message : String(e)}`);
    }
    const suite = reports.filter((r) => r.section === 'suite');
    const md = [
      `# Workload suite on ${reports[0]?.report.adapter ?? 'unknown adapter'}${reports[0]?.report.robustness === false ? ' (no bounds checks)' : ''}${hostCopyNote(reports.map((r) => r.report))}`,
      '',
      '## Suite (ranks sharing one device; D2 = ranks on two devices, peer-copy)',
      benchTable(suite.map((r) => r.report)),
      '',
      formatBenchSummary(summarizeBench(suite.map((r) => r.report))),
      '',
      '## Tile-order ablation (4 ranks, one device)',
      benchTable(reports.filter((r) => r.section !== 'sweep' && r.report.ranks === 4 && r.report.devices === 1 && ['ag-gemm', 'gemm-rs'].includes(r.report.workload)).map((r) => r.report)),
      '',
      '## Chunk-size sweep (4 ranks, one device)',
      benchTable(reports.filter((r) => r.section !== 'ablation' && r.report.ranks === 4 && r.report.devices === 1 && ['ag-gemm', 'gemm-rs'].includes(r.report.workload)).map((r) => r.report)),
      '',
      '## Cost model',
      costModelTable(modelBench(reports.map((r) => r.report), reports.map((r) => r.run))),
      failures.length ? `## Failures\n\n${failures.map((f) => `- ${f}`).join('\n')}` : '',
    ].join('\n');
    console.log(md);
    writeFileSync(join(out, 'suite.md'), `${md}\n`);
    writeFileSync(join(out, 'suite.json'), `${JSON.stringify({ size, reports, failures }, null, 2)}\n`);
    writeFileSync(join(out, 'speedup.svg'), `${speedupSvg(suite.map((r) => r.report), `Fused speedup, ${reports[0]?.report.adapter ?? ''}`)}\n`);
    if (trace) {
      writeFileSync(join(out, 'trace.json'), JSON.stringify(trace));
      writeFileSync(join(out, 'timeline.svg'), `${timelineSvg(traceTimeline(trace), 'One fused run: ag-gemm, 4 ranks on 2 devices')}\n`);
    }
  } finally {
    devices.forEach((d) => d.close());
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
  process.exitCode = 1;
});
