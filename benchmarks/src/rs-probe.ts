/**
 * Where a fused kernel's time goes (issue 20): a workload (gemm-rs unless --workload) timed up to five
 * ways on one device, each at the same shape, tile and target, in one process:
 *   fused        the fused kernel as the suite times it (chunks published inside the dispatch, a part
 *                per output tile: CodegenOptions.partShape 'tiles')
 *   fused-rows   gemm-rs and gemv-ar: the same with parts cut in rows across C's whole width ('rows',
 *                the cut before 2026-11-25: the last tile of a row band publishes all of the band's parts)
 *   unpublished  the fused kernel, its chunks never published (CodegenOptions.unpublished): the
 *                kernel's code and tile order without the moves' work; its output is not the answer
 *   compute      the kernel compiled without its plan, in the fused kernel's tile order
 *   compute-rm   the same in row-major order (the compute-alone figure of the suite)
 * fused − unpublished is what the moves (a reduction's adds, a gather's copies) cost inside the
 * dispatch; unpublished − compute what the kernel's signalling code and chunk bookkeeping cost without
 * them; compute − compute-rm the tile order. Where tiles wait for chunks (ag-gemm, a2a-gemm, ...), the
 * unpublished kernel's waits never end: it is timed only for workloads whose tiles wait for none
 * (gemm-rs, gemv-ar).
 *
 * --repeat N runs the verified variants (fused, fused-rows) N times each: a race shows as a run that
 * does not match the reference.
 *
 * --reduction ring|one-shot (gemm-rs, gemv-ar) and --gather ring|one-shot (ag-gemm, ring-attn): the plan;
 * by default the workload's own, as the suite runs it. Shapes are the suite's (suite-shapes.ts) at --size.
 *
 *   node dist/rs-probe.mjs [--workload W] [--size 4096 | --shape MxNxK] [--ranks 2,4] [--dtype f16]
 *                          [--reduction ring|one-shot] [--gather ring|one-shot] [--repeat 1] [--out DIR]
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { compileOrThrow, getWorkload, runWorkload, WARMUP_BUSY_MS, type GatherPlan, type ReductionPlan, type RunWorkloadOptions, type WorkloadName } from '@syncopate/core';
import { openDevices } from '@syncopate/runtime';
import { gpuShape } from './suite-shapes.js';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { workload: { type: 'string' }, size: { type: 'string' }, shape: { type: 'string' }, ranks: { type: 'string' }, dtype: { type: 'string' }, repeat: { type: 'string' }, out: { type: 'string' }, reduction: { type: 'string' }, gather: { type: 'string' } },
  });
  const workload = (values.workload ?? 'gemm-rs') as WorkloadName;
  getWorkload(workload); // an unknown name fails here, naming the known ones
  const reduces = workload === 'gemm-rs' || workload === 'gemv-ar';
  const size = Number(values.size ?? 4096);
  const given = values.shape?.split('x').map(Number);
  const repeat = Number(values.repeat ?? 1);
  const dtype = (values.dtype ?? 'f16') as 'f16' | 'f32';
  const plans = { ...(values.reduction && { reduction: values.reduction as ReductionPlan }), ...(values.gather && { gather: values.gather as GatherPlan }) };
  const out = values.out ?? process.env['OUT'] ?? '.';
  mkdirSync(out, { recursive: true });
  const [device] = await openDevices(1, { device: { requiredLimits: 'adapter-max' } });
  try {
    for (const ranks of (values.ranks ?? '2,4').split(',').map(Number)) {
      const shape = given ? { m: given[0]!, n: given[1]!, k: given[2]! } : gpuShape(workload, ranks, size);
      const base: RunWorkloadOptions = { workload, ranks, shape, dtype, ...plans, order: 'chunk-arrival', backend: 'auto', seed: 1, device: device!, timedRuns: 10, warmupRuns: 10, warmupBusyMs: WARMUP_BUSY_MS, verifyRows: 16 };
      const built = getWorkload(workload).build({ ranks, shape, dtype, ...plans });
      const chunks = compileOrThrow(built.kernel, built.plan).module.chunks.map((c) => c.value.name);
      const reductionOnly: [string, RunWorkloadOptions][] = [
        ['fused-rows', { ...base, codegen: { partShape: 'rows' } }],
        ['unpublished', { ...base, codegen: { unpublished: chunks }, verify: false }],
      ];
      const variants: [string, RunWorkloadOptions][] = [
        ['fused', base],
        ...(reduces ? reductionOnly : []),
        ['compute', { ...base, withoutTransfers: true }],
        ['compute-rm', { ...base, withoutTransfers: true, order: 'row-major' }],
      ];
      for (const [variant, o] of variants) {
        const checked = o.verify !== false && !o.withoutTransfers;
        for (let run = 0; run < (checked ? repeat : 1); run++) {
          const r = await runWorkload(o);
          const line = { workload, variant, plan: r.plan, ranks, shape, dtype, target: r.target, block: r.block, ms: r.timings, timing: r.timing, verified: checked ? r.verified : null, maxAbsError: checked ? r.maxAbsError : null };
          console.log(JSON.stringify(line));
          appendFileSync(join(out, 'rs-probe.jsonl'), `${JSON.stringify(line)}\n`);
        }
      }
    }
  } finally {
    device?.close();
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
  process.exitCode = 1;
});
