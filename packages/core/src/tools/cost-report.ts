/**
 * The cost model against a bench: per workload configuration (rows that differ only in tile order or
 * chunk count share it) the parameters are fitted from the compute-only and comm-only measurements,
 * each variant is predicted and set beside its measured time, and the same parameters project the
 * workload to more ranks (the same global shape: strong scaling).
 */
import type { ChunkPlan, Module } from '@syncopate/ir';
import { placeRanks } from '@syncopate/runtime';
import { formatBenchMs, type BenchReport } from './bench.js';
import { fitParams, nodeGeometry, predict, predictOnNodes, shareOfDevice, shareOfQueue, workloadGeometry, type CostModelParams, type NodeLayout, type Prediction, type WorkloadGeometry } from './cost-model.js';
import { getWorkload } from '../workloads/index.js';
import { type RunOptions } from './run-report.js';

/** The scale-out projection: the same global shape at more ranks (the seeds project up to 128 nodes). */
export const PROJECTED_RANKS = [8, 16, 64, 128, 256] as const;

export interface ModelledRow {
  readonly report: BenchReport;
  readonly predicted: Prediction;
  /** (predicted − measured) / measured per variant. */
  readonly error: { readonly sequential: number; readonly decomposed: number; readonly fused: number };
}

export interface Projection {
  readonly ranks: number;
  readonly devices: number;
  readonly predicted?: Prediction;
  /** Why there is no prediction (the workload cannot be built at that rank count). */
  readonly skipped?: string;
}

export interface ModelledConfig {
  readonly key: string;
  readonly params: CostModelParams;
  /**
   * The parameters fused is predicted with: `params` but for the communication, fitted to the fused
   * variant's own communication where it was timed alone (ranks on several devices; BenchReport.overlap).
   */
  readonly fusedParams: CostModelParams;
  readonly rows: readonly ModelledRow[];
  readonly projections: readonly Projection[];
}

/**
 * The kernel and chunk plan a run of `run` builds (no device): with the plan a run over `run.devices`
 * devices takes by default (gemm-rs reduces by a ring over several, `defaultReduction`).
 */
export function buildRunWorkload(run: Pick<RunOptions, 'workload' | 'ranks' | 'shape' | 'dtype' | 'chunksPerRank' | 'reduction' | 'gather' | 'devices'>): { kernel: Module; plan: ChunkPlan } {
  return getWorkload(run.workload).build({
    ranks: run.ranks,
    shape: run.shape,
    dtype: run.dtype,
    ...(run.chunksPerRank ? { chunksPerRank: run.chunksPerRank } : {}),
    ...(run.reduction ? { reduction: run.reduction } : {}),
    ...(run.devices !== undefined && run.devices > 1 ? { devices: run.devices } : {}),
    ...(run.gather ? { gather: run.gather } : {}),
  });
}

function geometryOf(run: Pick<RunOptions, 'workload' | 'ranks' | 'shape' | 'dtype' | 'chunksPerRank' | 'reduction' | 'gather' | 'devices' | 'ranksPerDevice'>): WorkloadGeometry {
  const { kernel, plan } = buildRunWorkload(run);
  return workloadGeometry(kernel, plan, placeRanks(run.ranks, run.devices ?? 1, run.ranksPerDevice));
}

const relative = (predicted: number, measured: number) => (predicted - measured) / measured;

/** Models every configuration of `reports` (made by `runs`, in the same order). */
export function modelBench(reports: readonly BenchReport[], runs: readonly RunOptions[]): ModelledConfig[] {
  const groups = new Map<string, { report: BenchReport; run: RunOptions; geometry: WorkloadGeometry }[]>();
  reports.forEach((report, i) => {
    // Fitted on measured parts only: compute alone and communication alone, each timed.
    if (!report.overlap?.commMeasured) return;
    const run = runs[i]!;
    const { m, n, k } = run.shape;
    const key = `${run.workload} ${m}x${n}x${k} ${run.dtype} R${run.ranks} D${report.devices}${run.reduction ? ` ${run.reduction}` : ''}${run.gather ? ` ${run.gather} gather` : ''}`;
    groups.set(key, [...(groups.get(key) ?? []), { report, run, geometry: geometryOf(run) }]);
  });
  const fitted = [...groups].map(([key, members]) => {
    const fit = (comm: (o: NonNullable<BenchReport['overlap']>) => number) =>
      fitParams(members.map((m) => ({ geometry: m.geometry, computeOnlyMs: m.report.overlap!.computeOnlyMs.median, commOnlyMs: comm(m.report.overlap!) })));
    const base = fit((o) => o.commOnlyMs);
    // The dispatch cost is what the decomposed runs took beyond the boundary-free pipeline, per boundary.
    const perBoundary = members.map((m) => (m.report.variants.decomposed.ms.median - predict(m.geometry, base).fused) / Math.max(1, m.geometry.stepBytes.length));
    const params = { ...base, dispatchMs: Math.max(0, perBoundary.reduce((a, b) => a + b, 0) / perBoundary.length) };
    const fusedComm = members.every((m) => m.report.overlap!.fusedCommOnlyMs !== undefined);
    return { key, members, params, fusedParams: fusedComm ? { ...fit((o) => o.fusedCommOnlyMs!), dispatchMs: params.dispatchMs } : params };
  });
  // A fused run at a tuned sequential phasing (autotune.ts) hides nothing: the shares are learnt from
  // overlapped ones, and the model predicts it as the sequential variant.
  const sequentialPhasing = (report: BenchReport) => report.variants.fused.phasing === 'sequential';
  const measured = (c: (typeof fitted)[number]) =>
    c.members.filter((m) => !sequentialPhasing(m.report)).map((m) => ({ geometry: m.geometry, params: c.fusedParams, fusedMs: m.report.variants.fused.ms.median }));
  return fitted.map(({ key, members, params: own, fusedParams: ownFused }) => {
    // The shares are learnt from the other configurations only: a row never predicts itself. The
    // queue's, from those whose transfers go the same way (feeding loads, or carrying results out).
    const others = fitted.filter((c) => c.key !== key).flatMap(measured);
    const deviceShare = shareOfDevice(others);
    const queueShare = shareOfQueue(others.filter((r) => r.geometry.direction === members[0]!.geometry.direction));
    const params = { ...own, deviceShare, queueShare };
    const fusedParams = { ...ownFused, deviceShare, queueShare };
    const predictAll = (geometry: WorkloadGeometry): Prediction => ({ ...predict(geometry, params), fused: predict(geometry, fusedParams).fused });
    const rows = members.map(({ report, geometry }) => {
      const all = predictAll(geometry);
      const predicted = sequentialPhasing(report) ? { ...all, fused: all.sequential } : all;
      const v = report.variants;
      return {
        report,
        predicted,
        error: {
          sequential: relative(predicted.sequential, v.sequential.ms.median),
          decomposed: relative(predicted.decomposed, v.decomposed.ms.median),
          fused: relative(predicted.fused, v.fused.ms.median),
        },
      };
    });
    const { run } = members[0]!;
    const ranksPerDevice = Math.ceil(run.ranks / members[0]!.report.devices);
    const projections = PROJECTED_RANKS.map((ranks): Projection => {
      const devices = Math.ceil(ranks / ranksPerDevice);
      try {
        return { ranks, devices, predicted: predictAll(geometryOf({ ...run, ranks, devices, ranksPerDevice })) };
      } catch (e) {
        return { ranks, devices, skipped: (e as Error).message };
      }
    });
    return { key, params, fusedParams, rows, projections };
  });
}

/**
 * A configuration's prediction for `run` placed on `layout.nodes` nodes of `layout.gpusPerNode`
 * devices (`run.ranks` over all of them, `run.ranksPerDevice` a device, default as many as divide
 * evenly): sequential and decomposed with `config.params`, fused with `config.fusedParams`, chunks
 * between nodes over `layout.interNode` (`predictOnNodes`).
 */
export function projectOnNodes(run: Pick<RunOptions, 'workload' | 'ranks' | 'shape' | 'dtype' | 'chunksPerRank' | 'reduction' | 'gather' | 'ranksPerDevice'>, config: Pick<ModelledConfig, 'params' | 'fusedParams'>, layout: NodeLayout): Prediction {
  const devices = layout.nodes * layout.gpusPerNode;
  const rankDevice = placeRanks(run.ranks, devices, run.ranksPerDevice);
  const used = Math.max(...rankDevice) + 1;
  if (used !== devices) throw new RangeError(`projectOnNodes: ${run.ranks} ranks fill ${used} of the ${devices} devices of ${layout.nodes} nodes of ${layout.gpusPerNode}`);
  const { kernel, plan } = buildRunWorkload({ ...run, devices });
  const g = nodeGeometry(kernel, plan, rankDevice, layout);
  return { ...predictOnNodes(g, config.params, layout.interNode), fused: predictOnNodes(g, config.fusedParams, layout.interNode).fused };
}

const ms = formatBenchMs;
const pct = (x: number) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(0)}%`;

/** Markdown: the fitted parameters, predicted vs measured per row, and the projections. */
export function costModelTable(configs: readonly ModelledConfig[]): string {
  const lines: string[] = [];
  for (const c of configs) {
    const p = c.params;
    lines.push(
      `**${c.key}**: tile ${(p.tileMs * 1000).toFixed(2)} µs, step latency ${ms(p.latencyMs)} ms, ${(p.bytesPerMs / 1e6).toFixed(2)} GB/s, dispatch boundary ${ms(p.dispatchMs)} ms (fitted to the decomposed runs), device share ${(p.deviceShare ?? 0).toFixed(2)}, queue share ${(p.queueShare ?? 0).toFixed(2)} (from the other configurations' fused runs)` +
        (c.fusedParams.bytesPerMs !== p.bytesPerMs ? `; fused from its own communication: step latency ${ms(c.fusedParams.latencyMs)} ms, ${(c.fusedParams.bytesPerMs / 1e6).toFixed(2)} GB/s` : ''),
      '',
      '| order | chunks/rank | sequential ms (model, error) | decomposed ms (model, error) | fused ms (model, error) |',
      '| --- | --- | --- | --- | --- |',
    );
    for (const r of c.rows) {
      const cell = (v: 'sequential' | 'decomposed' | 'fused') => `${ms(r.report.variants[v].ms.median)} (${ms(r.predicted[v])}, ${pct(r.error[v])})`;
      lines.push(`| ${r.report.order} | ${r.report.chunksPerRank} | ${cell('sequential')} | ${cell('decomposed')} | ${cell('fused')} |`);
    }
    lines.push('', '| projected ranks | devices | sequential ms | decomposed ms | fused ms | fused vs sequential |', '| --- | --- | --- | --- | --- | --- |');
    for (const j of c.projections) {
      const q = j.predicted;
      lines.push(q ? `| ${j.ranks} | ${j.devices} | ${ms(q.sequential)} | ${ms(q.decomposed)} | ${ms(q.fused)} | ${(q.sequential / q.fused).toFixed(2)}x |` : `| ${j.ranks} | ${j.devices} | – | – | – | ${j.skipped} |`);
    }
    lines.push('');
  }
  return lines.join('\n');
}
