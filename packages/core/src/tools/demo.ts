/**
 * `pnpm demo`: compiles the AllGather + GEMM workload (4 ranks, ring all-gather of A) and prints
 * the pipeline, the IR after each pass, the pass timings and a summary. Exit code 1, with the
 * diagnostics, if it does not compile.
 */
import * as E from 'fp-ts/lib/Either.js';
import { formatDiagnostic, gemmKernel, SyncopateError, type ChunkPlan, type Module } from '@syncopate/ir';
import { formatTimings, ringAllGather } from '@syncopate/passes';
import { compile, type CompiledKernel } from '../api/compile.js';

const RANKS = 4;
const SHAPE = { m: 256, n: 256, k: 128 } as const;

function ringAllGatherOfA(): ChunkPlan {
  return ringAllGather({ ranks: RANKS, tensor: { name: 'A', shape: [SHAPE.m, SHAPE.k] }, axis: 0 });
}

function printHeader(kernel: Module, plan: ChunkPlan): void {
  console.log('Syncopate for WebGPU: demo');
  console.log(`AllGather + GEMM: C[${SHAPE.m},${SHAPE.n}] = A[${SHAPE.m},${SHAPE.k}] · B[${SHAPE.k},${SHAPE.n}], A sharded on rows over ${kernel.ranks} ranks`);
  console.log(`plan: ${plan.name ?? 'unnamed'}, ${plan.chunks.length} chunks`);
}

function printCompiled(compiled: CompiledKernel): void {
  console.log(`\npipeline: ${compiled.pipeline}`);
  for (const { pass, ir } of compiled.dumps) console.log(`\n// ----- IR after ${pass} -----\n${ir.trimEnd()}`);
  console.log(`\npass timings\n${formatTimings(compiled.timings)}`);
}

function printSummary({ module, plan }: CompiledKernel): void {
  const { grid } = module.kernel;
  const tiles = grid.reduce((n, d) => n * d, 1);
  const steps = new Set(plan.chunks.map((c) => c.step)).size;
  console.log('\nsummary');
  console.log(`  ranks   ${module.ranks}`);
  console.log(`  chunks  ${module.chunks.length} over ${steps} steps`);
  console.log(`  tiles   ${tiles} (grid ${grid.join('x')})`);
  console.log('\nCompiled and verified. Running it on GPUs lands with the WGSL backend.');
}

function main(): number {
  const kernel = gemmKernel(SHAPE, { ranks: RANKS, distribute: 'ag' });
  const plan = ringAllGatherOfA();
  printHeader(kernel, plan);
  const result = compile(kernel, plan, { printAfter: 'all' });
  if (E.isLeft(result)) {
    console.error(`\ncompile failed:\n${result.left.map((d) => `  ${formatDiagnostic(d)}`).join('\n')}`);
    return 1;
  }
  printCompiled(result.right);
  printSummary(result.right);
  return 0;
}

try {
  process.exitCode = main();
} catch (thrown) {
  // The IR's own errors (e.g. a kernel the builder rejects) are reports for the user, not crashes.
  if (!(thrown instanceof SyncopateError)) throw thrown;
  console.error(`${thrown.name}: ${thrown.message}`);
  process.exitCode = 1;
}
