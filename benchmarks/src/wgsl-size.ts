/**
 * How the generated code grows with the plan: per workload, ranks and chunks per rank, the WGSL's
 * bytes and lines, and the warm median time of the passes (`compile()`) and of the WGSL emission
 * (`lowerToWgsl`), each over `--runs` runs after `--warmup`. Every workload at its default shape
 * (the one `syncopate compile` takes); a case the workload refuses prints its message. No GPU.
 *
 *   node dist/wgsl-size.mjs [--workloads ag-gemm,a2a-gemm] [--ranks 4,8,16,32,64] [--chunks 1,4] [--runs 5] [--warmup 2] [--json]
 *
 * Built like the other benchmarks (an entry in benchmarks/tsup.config.ts), or on its own:
 *   node_modules/.pnpm/node_modules/.bin/esbuild benchmarks/src/wgsl-size.ts --bundle --platform=node --format=esm \
 *     --external:webgpu --outfile=dist/wgsl-size.mjs $(for p in ir passes backends runtime core; do printf -- '--alias:@syncopate/%s=./packages/%s/src/index.ts ' $p $p; done)
 */
import { parseArgs } from 'node:util';
import { compileOrThrow, getWorkload, lowerToWgsl, WORKLOAD_NAMES, type WorkloadName } from '@syncopate/core';

const { values } = parseArgs({
  options: {
    workloads: { type: 'string' },
    ranks: { type: 'string' },
    chunks: { type: 'string' },
    runs: { type: 'string' },
    warmup: { type: 'string' },
    json: { type: 'boolean' },
  },
});
const list = (text: string | undefined, fallback: string) => (text ?? fallback).split(',').map((s) => s.trim());
const workloads = list(values.workloads, WORKLOAD_NAMES.join(',')) as WorkloadName[];
const rankCounts = list(values.ranks, '4,8,16,32,64').map(Number);
const chunkCounts = list(values.chunks, '1,4').map(Number);
const runs = Number(values.runs ?? 5);
const warmup = Number(values.warmup ?? 2);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Row {
  readonly workload: WorkloadName;
  readonly ranks: number;
  readonly chunksPerRank: number;
  readonly chunks?: number;
  readonly bytes?: number;
  readonly lines?: number;
  readonly passesMs?: number;
  readonly wgslMs?: number;
  readonly refused?: string;
}

function measure(workload: WorkloadName, ranks: number, chunksPerRank: number): Row {
  const w = getWorkload(workload);
  let built;
  try {
    built = w.build({ ranks, shape: w.defaults, dtype: 'f32', chunksPerRank });
  } catch (e) {
    return { workload, ranks, chunksPerRank, refused: (e as Error).message };
  }
  const passes: number[] = [];
  const emit: number[] = [];
  let wgsl = '';
  let chunks = 0;
  for (let i = 0; i < warmup + runs; i++) {
    const t0 = performance.now();
    const compiled = compileOrThrow(built.kernel, built.plan);
    const t1 = performance.now();
    wgsl = lowerToWgsl(compiled, { target: 'simt' }).wgsl;
    const t2 = performance.now();
    chunks = compiled.module.chunks.length;
    if (i < warmup) continue;
    passes.push(t1 - t0);
    emit.push(t2 - t1);
  }
  return { workload, ranks, chunksPerRank, chunks, bytes: wgsl.length, lines: wgsl.split('\n').length - 1, passesMs: median(passes), wgslMs: median(emit) };
}

const rows: Row[] = [];
if (!values.json) console.log('| workload | ranks | chunks/rank | chunks | WGSL bytes | lines | passes ms | WGSL ms | total ms |\n| --- | --: | --: | --: | --: | --: | --: | --: | --: |');
for (const workload of workloads) {
  for (const ranks of rankCounts) {
    for (const chunksPerRank of chunkCounts) {
      const row = measure(workload, ranks, chunksPerRank);
      rows.push(row);
      if (values.json) continue;
      if (row.refused !== undefined) console.log(`| ${workload} | ${ranks} | ${chunksPerRank} | refused: ${row.refused.split('\n')[0]} | | | | | |`);
      else console.log(`| ${workload} | ${ranks} | ${chunksPerRank} | ${row.chunks} | ${row.bytes} | ${row.lines} | ${row.passesMs!.toFixed(1)} | ${row.wgslMs!.toFixed(1)} | ${(row.passesMs! + row.wgslMs!).toFixed(1)} |`);
    }
  }
}
if (values.json) console.log(JSON.stringify({ runs, warmup, rows }, null, 2));
