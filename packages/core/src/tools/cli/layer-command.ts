/** `syncopate run|bench|tune tp-layer`: runs the layer command and prints its report; returns the exit code. */
import type { TpLayerConfig } from '../../layers/config.js';
import { alignedTable, formatMs } from '../report-format.js';
import { benchTpLayer, runTpLayer, tuneTpLayer, type TpLayerBenchReport, type TpLayerCheckResult, type TpLayerRunReport, type TpLayerTuneReport } from '../tp-layer-runner.js';
import { layoutRows } from '../process-report.js';
import { asJob, type CliIO } from './commands.js';
import type { LayerCommand } from './layer-args.js';

export async function layerCommandRun(cmd: LayerCommand, io: CliIO): Promise<number> {
  // Under mpirun (run and bench): this process's block of the devices, one a process by default.
  const options = asJob(cmd.options, io.processes);
  if (cmd.action === 'run') {
    const report = await runTpLayer(options);
    io.out(cmd.json ? JSON.stringify(report, null, 2) : formatLayerRun(report));
    return report.check.verified ? 0 : 1;
  }
  if (cmd.action === 'bench') {
    const report = await benchTpLayer(options);
    io.out(cmd.json ? JSON.stringify(report, null, 2) : formatLayerBench(report));
    return report.verified ? 0 : 1;
  }
  const report = await tuneTpLayer({ ...options, ...(cmd.chunkCandidates && { chunksPerRank: cmd.chunkCandidates }) });
  io.out(cmd.json ? JSON.stringify(report, null, 2) : formatLayerTune(report));
  return report.best ? 0 : 1;
}

/** `S=4096 H=4096 (32 heads of 128) F=11008, f16, 8 ranks on 1 device (adapter)`. */
function describeLayer(c: TpLayerConfig, devices: number, adapter: string): string {
  return `S=${c.seq} H=${c.hidden} (${c.heads} heads of ${c.headDim}) F=${c.ffn}, ${c.dtype}, ${c.ranks} ranks on ${devices} device${devices === 1 ? '' : 's'} (${adapter})`;
}

const sci = (x: number) => (x === 0 ? '0' : x.toExponential(1));

function describeCheck(c: TpLayerCheckResult): string {
  const against = c.against === 'reference' ? 'the CPU reference' : 'the sequential layer';
  return `${c.verified ? 'verified' : 'WRONG'} against ${against}: max error ${sci(c.maxAbs)} of ${c.scale.toPrecision(3)} (relative ${sci(c.relative)}, tolerance ${sci(c.tolerance)})`;
}

const spread = (s: { median: number; min: number; max: number; runs: number }) => `${formatMs(s.median)} ms (min ${formatMs(s.min)}, max ${formatMs(s.max)}, ${s.runs} runs)`;

export function formatLayerRun(r: TpLayerRunReport): string {
  return alignedTable([
    ['layer', `tp-layer ${r.variant}`],
    ['shape', describeLayer(r.config, r.devices, r.adapter)],
    ...(r.processes ? layoutRows(r.processes) : []),
    ['GEMMs', r.gemmTarget],
    ['attention', r.attentionTarget],
    ['check', describeCheck(r.check)],
    ['time', `${spread(r.ms)}, host clock around the ten steps${r.processes ? ', each run its slowest process' : ''}`],
  ]);
}

export function formatLayerBench(r: TpLayerBenchReport): string {
  const checks: [string, string][] = [['fused vs sequential', describeCheck(r.check.fusedVsSequential)]];
  if (r.check.vsReference) {
    checks.push(['fused', describeCheck(r.check.vsReference.fused)], ['sequential', describeCheck(r.check.vsReference.sequential)]);
  }
  const steps = Object.keys(r.stepsMedianMs.fused).map((name): [string, string] => [`  ${name}`, `${formatMs(r.stepsMedianMs.fused[name]!).padStart(9)}  ${formatMs(r.stepsMedianMs.sequential[name] ?? NaN).padStart(10)}`]);
  return [
    `tp-layer: ${describeLayer(r.config, r.devices, r.adapter)}`,
    ...(r.processes ? [alignedTable(layoutRows(r.processes))] : []),
    alignedTable(checks),
    alignedTable([
      ['fused', spread(r.ms.fused)],
      ['sequential', spread(r.ms.sequential)],
      ['fused over sequential', `${r.fusedOverSequential.toFixed(2)}x (${r.rounds} rounds, both variants each round, host clock${r.processes ? ', each run its slowest process' : ''})`],
      ['perfect overlap', `${formatMs(r.overlapBoundMs)} ms: fused at ${r.fusedOverBound.toFixed(2)}x of it (each GEMM step the longer of its compute and its collective)`],
      ['GEMMs, attention', `${r.gemmTarget.fused}, ${r.attentionTarget.fused}`],
    ]),
    alignedTable([['each step alone (median ms)', '    fused  sequential'], ...steps]),
  ].join('\n');
}

export function formatLayerTune(r: TpLayerTuneReport): string {
  const rows = r.candidates.map((c): [string, string] => [`  ${c.chunksPerRank} chunk${c.chunksPerRank === 1 ? ' ' : 's'}  gather ${c.gather.padEnd(8)} reduction ${c.reduction.padEnd(8)}`, `${formatMs(c.ms.median).padStart(9)} ms  ${c.check.verified ? 'verified' : `WRONG (relative error ${sci(c.check.relative)})`}`]);
  const best = r.best;
  const c = r.config;
  const command = best && `syncopate bench tp-layer --seq ${c.seq} --hidden ${c.hidden} --heads ${c.heads} --head-dim ${c.headDim} --ffn ${c.ffn} --ranks ${c.ranks} --dtype ${c.dtype} --devices ${r.devices} --chunks-per-rank ${best.chunksPerRank} --gather ${best.gather} --reduction ${best.reduction}`;
  return [
    `tune tp-layer: ${describeLayer(r.config, r.devices, r.adapter)}`,
    alignedTable([['  sequential (baseline)', `${formatMs(r.sequential.median).padStart(9)} ms`], ...rows]),
    best
      ? `best: ${best.chunksPerRank} chunk(s) a rank, gather ${best.gather}, reduction ${best.reduction}: ${(r.sequential.median / best.ms.median).toFixed(2)}x over sequential\n  ${command}`
      : 'no candidate verified',
  ].join('\n');
}
