/**
 * The suite's eight two-device rows (suite-bench.ts `--devices 2`: the GEMMs at 2 ranks, the others at
 * 4, size 4096) with the ranks as processes or in one process, in the same call:
 *
 *   mpirun -n 2 node dist/process-rows.mjs [--runs N] [--out FILE] [--only w,...] [--dtype f16|f32]
 *   node dist/process-rows.mjs ...                  one process opens both GPUs (today's route)
 *
 * Under mpirun each process opens one GPU (its block of the host's GPUs) and runs its ranks; chunks
 * between the processes go by mpi (sent from and received into mapped staging), so each GPU has a
 * JavaScript thread of its own. Each row is benchWorkload: sequential, decomposed and fused in rounds,
 * the communication alone (of the sequential and the fused program) and the compute alone, each
 * variant checked against the CPU reference on 16 output rows first. The fused variant runs at
 * overlap phasing (no tuning). Process 0 writes one JSON line per row into --out and prints the table.
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { benchTable, benchWorkload, formatBenchSummary, joinProcessGroup, launchedByMpi, openRunDevices, summarizeBench, WARMUP_BUSY_MS, type BenchReport, type WorkloadName } from '@syncopate/core';
import { GEMM_BLOCK, gpuShape } from './suite-shapes.js';

/** The suite's two-device rows: workload, dtype, ranks. */
const ROWS: readonly (readonly [WorkloadName, 'f16' | 'f32', number])[] = [
  ['gemm-rs', 'f16', 2],
  ['ag-gemm', 'f16', 2],
  ['gemm-rs', 'f32', 2],
  ['ag-gemm', 'f32', 2],
  ['a2a-gemm', 'f32', 4],
  ['embed-a2a', 'f32', 4],
  ['ring-attn', 'f32', 4],
  ['gemv-ar', 'f32', 4],
];

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { runs: { type: 'string' }, out: { type: 'string' }, only: { type: 'string' }, dtype: { type: 'string' }, size: { type: 'string' } } });
  const group = launchedByMpi() ? await joinProcessGroup() : undefined;
  const processes = group && group.size > 1 ? group : undefined;
  const lead = !processes || processes.rank === 0;
  const mode = processes ? `${processes.size} processes` : 'one process';
  const size = Number(values.size ?? 4096);
  const only = values.only?.split(',');
  const rows = ROWS.filter(([w, d]) => (!only || only.includes(w)) && (!values.dtype || values.dtype === d));
  const handles = await openRunDevices(2, processes);
  const ours = handles.flatMap((h) => (h ? [h] : []));
  if (lead) {
    ours.forEach((d) => console.log(`${mode}: device ${d.index}: ${d.placement.description}`));
    if (values.out) writeFileSync(values.out, '');
  }
  const reports: BenchReport[] = [];
  try {
    for (const [workload, dtype, ranks] of rows) {
      const shape = gpuShape(workload, ranks, size);
      const block = workload === 'ag-gemm' || workload === 'gemm-rs' ? GEMM_BLOCK[dtype] : {};
      const started = performance.now();
      const report = await benchWorkload({
        workload,
        ranks,
        dtype,
        shape,
        ...block,
        order: 'chunk-arrival',
        chunksPerRank: 1,
        seed: 1,
        handles,
        devices: 2,
        target: 'auto',
        verifyRows: 16,
        runs: Number(values.runs ?? 20),
        warmup: 10,
        warmupBusyMs: WARMUP_BUSY_MS,
        ...(processes && { processes }),
      });
      reports.push(report);
      if (!lead) continue;
      const line = { mode, processes: processes?.size ?? 1, row: `${workload} ${shape.m}x${shape.n}x${shape.k} ${dtype} R${ranks}`, seconds: (performance.now() - started) / 1000, report };
      console.log(JSON.stringify(line));
      if (values.out) appendFileSync(values.out, `${JSON.stringify(line)}\n`);
    }
  } finally {
    ours.forEach((d) => d.close());
  }
  if (lead) console.log(`${mode}\n${benchTable(reports)}\n\n${formatBenchSummary(summarizeBench(reports))}`);
  await group?.close();
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
  process.exitCode = 1;
});
