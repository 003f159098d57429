/**
 * The cost model's projection of the suite's two-GPU f16 GEMM rows (ag-gemm, gemm-rs) to 16 ranks on
 * 2 nodes of 8 GPUs, one rank a GPU: the parameters fitted from the measured rows as model-suite fits
 * them (core's modelBench: compute alone, communication alone, the shares learnt from the other rows),
 * chunks within a node at the fitted rate, chunks between nodes over InfiniBand NDR or 25 GbE TCP
 * (core's projectOnNodes). No device needed: a projection from a model, not a measurement.
 *
 *   node dist/project-nodes.mjs benchmarks/results/2gpu-2026-11-27o/call4/suite.jsonl
 */
import { parseArgs } from 'node:util';
import { formatBenchMs, modelBench, projectOnNodes, type NodeLayout, type RunOptions } from '@syncopate/core';
import { readSuiteLines } from './model-suite.js';

/** Bytes a millisecond from Gb/s. */
const gbits = (gbps: number) => (gbps * 1e9) / 8 / 1e3;

/**
 * The links between the nodes, one a GPU, as docs/processes.md states and sources them:
 * - InfiniBand NDR: one 400 Gb/s HCA a GPU at 95% (Azure's health checks pass an ND H100 v5 HCA at 380
 *   Gb/s of GPUDirect ib_write_bw), 2 µs a step (MPI's small-message latency over InfiniBand);
 * - 25 GbE over TCP: 25 Gb/s at 94% (TCP/IPv4 in 1500-byte frames: 943 of 1000 Mb/s on 1 GbE), 25 µs
 *   a step (MPI's small-message latency over TCP).
 */
const LINKS: readonly { readonly name: string; readonly layout: NodeLayout }[] = [
  { name: 'InfiniBand NDR, 380 Gb/s, 2 µs', layout: { nodes: 2, gpusPerNode: 8, interNode: { bytesPerMs: gbits(380), latencyMs: 0.002 } } },
  { name: '25 GbE TCP, 23.5 Gb/s, 25 µs', layout: { nodes: 2, gpusPerNode: 8, interNode: { bytesPerMs: gbits(23.5), latencyMs: 0.025 } } },
];

const RANKS = 16;

const isMain = process.argv[1] !== undefined && /project-nodes\.(m?js|ts)$/.test(process.argv[1]);
if (isMain) {
  const { positionals } = parseArgs({ allowPositionals: true });
  const lines = readSuiteLines(positionals);
  const configs = modelBench(
    lines.map((l) => l.report),
    lines.map((l) => l.run),
  );
  const ms = formatBenchMs;
  const gbps = (bytesPerMs: number) => (bytesPerMs / 1e6).toFixed(2);
  const fitted: string[] = [];
  console.log('| row | ranks, placement | links between nodes | compute alone | comm alone | sequential | decomposed | fused | fused vs sequential |');
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const [i, line] of lines.entries()) {
    const { run, report } = line;
    if (run.dtype !== 'f16' || (run.workload !== 'ag-gemm' && run.workload !== 'gemm-rs')) continue;
    const { m, n, k } = run.shape;
    const config = configs.find((c) => c.rows.some((r) => r.report === lines[i]!.report))!;
    const label = `${run.workload} ${m}x${n}x${k} f16`;
    const o = report.overlap!;
    const v = report.variants;
    const measured = [o.computeOnlyMs.median, o.commOnlyMs, v.sequential.ms.median, v.decomposed.ms.median, v.fused.ms.median].map(ms);
    // Measured: its ratio is the rounds' (benchmarks/README.md), not one of medians.
    console.log(`| ${label} | ${run.ranks}, one a GPU (measured) | – | ${measured.join(' | ')} | – |`);
    const at16: Pick<RunOptions, 'workload' | 'ranks' | 'shape' | 'dtype'> = { workload: run.workload, ranks: RANKS, shape: run.shape, dtype: run.dtype };
    const oneNode: NodeLayout = { nodes: 1, gpusPerNode: RANKS, interNode: { bytesPerMs: config.params.bytesPerMs, latencyMs: config.params.latencyMs } };
    for (const { name, layout } of [{ name: 'none (16 GPUs of one node)', layout: oneNode }, ...LINKS]) {
      const p = projectOnNodes(at16, config, layout);
      const cells = [p.computeOnly, p.commOnly, p.sequential, p.decomposed, p.fused].map(ms);
      console.log(`| ${label} | 16, ${layout.nodes} × ${layout.gpusPerNode} (model) | ${name} | ${cells.join(' | ')} | ${(p.sequential / p.fused).toFixed(2)}x |`);
    }
    const p = config.params;
    fitted.push(
      `- ${config.key}: tile ${(p.tileMs * 1000).toFixed(3)} µs, ${gbps(p.bytesPerMs)} GB/s (fused ${gbps(config.fusedParams.bytesPerMs)}), latency ${ms(p.latencyMs)} ms, dispatch ${ms(p.dispatchMs)} ms, queue share ${(p.queueShare ?? 0).toFixed(2)}`,
    );
  }
  console.log(`\nFitted from the measured row (model-suite's fit; the queue share from the other rows):\n\n${fitted.join('\n')}`);
}
