// ag-gemm (or any workload) compile() then lowerToWgsl, timed: bundle it against a commit's sources as run.sh bundles the CLI (esbuild, @syncopate/* aliased to packages/*/src), then: node compare.mjs WORKLOAD RANKS CHUNKS_PER_RANK RUNS WARMUP
import { compileOrThrow, getWorkload, lowerToWgsl } from '@syncopate/core';
const [workload='ag-gemm', ranks='64', cpr='1', runs='10', warm='3'] = process.argv.slice(2);
const w = getWorkload(workload);
const built = w.build({ ranks: +ranks, shape: w.defaults, dtype: 'f32', chunksPerRank: +cpr });
const P = [], E = [], passes = {}; let wgsl = '';
for (let i = 0; i < +runs + +warm; i++) {
  const t0 = performance.now();
  const c = compileOrThrow(built.kernel, built.plan);
  const t1 = performance.now();
  wgsl = lowerToWgsl(c, { target: 'simt' }).wgsl;
  const t2 = performance.now();
  if (i >= +warm) { P.push(t1 - t0); E.push(t2 - t1); for (const t of c.timings) (passes[t.pass] ??= []).push(t.ms); }
}
const med = (x) => [...x].sort((a, b) => a - b)[x.length >> 1];
const min = (x) => Math.min(...x);
console.log(`${workload} R${ranks} c${cpr}: min passes ${min(P).toFixed(1)} + wgsl ${min(E).toFixed(1)} = ${(min(P)+min(E)).toFixed(1)} ms (median ${med(P).toFixed(1)} + ${med(E).toFixed(1)}); ${wgsl.length} bytes; passes min: ${Object.entries(passes).map(([k, v]) => `${k} ${min(v).toFixed(1)}`).join(', ')}`);
