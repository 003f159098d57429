/**
 * Where a fused kernel's time goes (issue 20): a workload (gemm-rs unless --workload) timed up to five
 * ways on one device, each at the same shape, tile and target, in one process:
 *   fused        the fused kernel as the suite times it (chunks published inside the dispatch, a part
 *                per output tile: CodegenOptions.partShape 'tiles')
 *   fused-rows   gemm-rs and gemv-ar: the same with parts cut in rows across C's whole width ('rows',
 *                the cut before 2026-11-25: the last tile of a row band publishes all of the band's parts)
 *   unpublished  the fused kernel, the chunks no tile waits on never published (CodegenOptions.unpublished):
 *                the kernel's code and tile order without those moves' work (gemm-rs's and gemv-ar's
 *                reductions, embed-a2a's all-to-all, a2a-gemm's combine); its output is not the answer
 *   parts-xN     a2a-gemm and ag-gemm: the fused kernel with chunks cut in rows N times coarser than
 *                PART_BYTES (N < 1: finer; CodegenOptions.partElements): fewer, larger parts ready at
 *                launch (token workgroups), and for a ring gather fewer, longer chains of forwards
 *   compute      the kernel compiled without its plan, in the fused kernel's tile order
 *   compute-rm   the same in row-major order (the compute-alone figure of the suite)
 * fused − unpublished is what the moves (a reduction's adds, a gather's copies) cost inside the
 * dispatch; unpublished − compute what the kernel's signalling code and chunk bookkeeping cost without
 * them; compute − compute-rm the tile order. Chunks that tiles wait for stay published (a wait for one
 * never published would never end); where every chunk is waited for (ag-gemm, ring-attn) there is no
 * unpublished variant.
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
import { PART_BYTES } from '@syncopate/backends';
import { compileOrThrow, dtypeBytes, getWorkload, runWorkload, WARMUP_BUSY_MS, type GatherPlan, type ReductionPlan, type RunWorkloadOptions, type WorkloadName } from '@syncopate/core';
import { alignChunks } from '@syncopate/passes';
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
      const module = compileOrThrow(built.kernel, built.plan).module;
      const waited = new Set(alignChunks(module).waits.map((u) => u.chunk.value.name));
      const unwaited = module.chunks.map((c) => c.value.name).filter((name) => !waited.has(name));
      const coarser = workload === 'a2a-gemm' || workload === 'ag-gemm' ? [0.25, 0.5, 4] : [];
      const variant = (name: string, o: RunWorkloadOptions): [string, RunWorkloadOptions][] => [[name, o]];
      const variants: [string, RunWorkloadOptions][] = [
        ...variant('fused', base),
        ...(reduces ? variant('fused-rows', { ...base, codegen: { partShape: 'rows' } }) : []),
        ...(unwaited.length > 0 ? variant('unpublished', { ...base, codegen: { unpublished: unwaited }, verify: false }) : []),
        ...coarser.flatMap((n) => variant(`parts-x${n}`, { ...base, codegen: { partElements: (n * PART_BYTES) / dtypeBytes(dtype) } })),
        ...variant('compute', { ...base, withoutTransfers: true }),
        ...variant('compute-rm', { ...base, withoutTransfers: true, order: 'row-major' }),
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
