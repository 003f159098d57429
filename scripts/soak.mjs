#!/usr/bin/env node
// Soak test: many compile + run cycles of a tiny AllGather + GEMM in one process, to show that memory
// and GPU buffers stay flat. Each cycle compiles the kernel from scratch (compile(): the passes), lowers
// it to WGSL, and runs it through runWorkload on one device kept open (which allocates the buffers,
// compiles the pipeline, runs, reads back, checks against the CPU reference and destroys the buffers).
//
// Live GPU buffers are counted by wrapping the device's createBuffer (and each buffer's destroy) here,
// in the script; the runtime is not changed for it. RSS and V8's heap are read after a forced GC.
//
//   pnpm build && node --expose-gc scripts/soak.mjs            # 1000 cycles, 2 ranks, 32x32x32
//   node --expose-gc scripts/soak.mjs --cycles 200 --ranks 4 --m 64 --n 64 --k 64 --every 50
//   node --expose-gc scripts/soak.mjs --mode compile   # or --mode run: one half of the cycle alone
//
// Uses the built packages (packages/core/dist), like the CLI. Exits 1 if a run is wrong, if buffers
// are left alive at the end, or if, after the warm-up cycles (--warmup, default 100), V8's heap grew by
// more than --max-heap-growth-mb (default 8) or RSS by more than --max-growth-mb (default 64).
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    cycles: { type: 'string', default: '1000' },
    ranks: { type: 'string', default: '2' },
    m: { type: 'string', default: '32' },
    n: { type: 'string', default: '32' },
    k: { type: 'string', default: '32' },
    workload: { type: 'string', default: 'ag-gemm' },
    every: { type: 'string', default: '100' },
    warmup: { type: 'string', default: '100' },
    'max-growth-mb': { type: 'string', default: '64' },
    'max-heap-growth-mb': { type: 'string', default: '8' },
    mode: { type: 'string', default: 'both' },
  },
});
const MODES = ['both', 'compile', 'run'];
if (!MODES.includes(values.mode)) {
  console.error(`soak: --mode must be one of ${MODES.join(', ')}, got '${values.mode}'`);
  process.exit(2);
}
const int = (name) => {
  const v = Number(values[name]);
  if (!Number.isSafeInteger(v) || v < 0) {
    console.error(`soak: --${name} must be a non-negative integer, got '${values[name]}'`);
    process.exit(2);
  }
  return v;
};
const cycles = int('cycles');
const every = Math.max(1, int('every'));
const warmup = Math.min(int('warmup'), cycles);
const maxGrowthMb = int('max-growth-mb');
const maxHeapGrowthMb = int('max-heap-growth-mb');
const shape = { m: int('m'), n: int('n'), k: int('k') };
const ranks = int('ranks');

let core;
try {
  core = await import('../packages/core/dist/index.js');
} catch (e) {
  console.error(`soak: cannot load packages/core/dist (run pnpm build first): ${e.message}`);
  process.exit(2);
}
const { compile, lowerToWgsl, openDevice, runFused, runWorkload, workloads } = core;

const gc = globalThis.gc ?? (() => {});
if (!globalThis.gc) console.log('(run node with --expose-gc for RSS figures after a full GC)');

/** Counts buffers and query sets that were created and not yet destroyed, by wrapping the device's factories. */
function countLiveObjects(device) {
  const live = { buffers: new Set(), querySets: new Set(), buffersCreated: 0 };
  const wrap = (factory, set, counted) => {
    const original = device[factory].bind(device);
    device[factory] = (descriptor) => {
      const object = original(descriptor);
      set.add(object);
      if (counted) live.buffersCreated++;
      const destroy = object.destroy.bind(object);
      object.destroy = () => {
        set.delete(object);
        destroy();
      };
      return object;
    };
  };
  wrap('createBuffer', live.buffers, true);
  wrap('createQuerySet', live.querySets, false);
  return live;
}

const mb = (bytes) => (bytes / 2 ** 20).toFixed(1);
function sample(label, live) {
  gc();
  const m = process.memoryUsage();
  const row = {
    label,
    rssMb: mb(m.rss),
    heapUsedMb: mb(m.heapUsed),
    externalMb: mb(m.external),
    arrayBuffersMb: mb(m.arrayBuffers),
    liveBuffers: live.buffers.size,
    liveQuerySets: live.querySets.size,
    buffersCreated: live.buffersCreated,
  };
  console.log(
    `${label.padEnd(14)} rss ${row.rssMb.padStart(7)} MiB  heap ${row.heapUsedMb.padStart(6)} MiB  external ${row.externalMb.padStart(6)} MiB  ` +
      `live buffers ${String(row.liveBuffers).padStart(3)}  live query sets ${row.liveQuerySets}  (buffers created ${row.buffersCreated})`,
  );
  return { ...row, rss: m.rss, heapUsed: m.heapUsed };
}

const handle = await openDevice();
const live = countLiveObjects(handle.device);
const workload = workloads[values.workload];
if (!workload) {
  console.error(`soak: unknown workload '${values.workload}'`);
  process.exit(2);
}
const options = { ranks, shape, dtype: 'f32' };
console.log(`soak: ${cycles} cycles of ${values.mode === 'both' ? 'compile + run' : values.mode}, ${values.workload} ${shape.m}x${shape.n}x${shape.k} on ${ranks} ranks, one device`);
console.log(`adapter: ${[handle.adapterInfo.vendor, handle.adapterInfo.device || handle.adapterInfo.description, handle.adapterInfo.architecture].filter(Boolean).join(' ')}`);
console.log(`node ${process.version}, pid ${process.pid}`);

const started = performance.now();
const first = sample('start', live);
let afterWarmup = first;
let wrong = 0;
/** The compiler's half of a cycle, from scratch: the passes and WGSL codegen. */
function compileOnce() {
  const { kernel, plan } = workload.build(options);
  const compiled = compile(kernel, plan, { passOptions: { 'reorder-tiles': { order: 'chunk-arrival' } } });
  if (compiled._tag === 'Left') throw new Error('the workload did not compile');
  return lowerToWgsl(compiled.right);
}
// For --mode run: one kernel, run again and again through runFused (the runtime alone).
const fused = values.mode === 'run' ? compileOnce() : undefined;
const inputs = fused ? workload.inputs(options, 1) : undefined;
for (let i = 1; i <= cycles; i++) {
  if (values.mode !== 'run') compileOnce();
  if (values.mode === 'both') {
    // Allocate, compile the pipeline, run, read back, check against the CPU, free.
    const report = await runWorkload({ workload: values.workload, ...options, order: 'chunk-arrival', backend: 'auto', seed: i, device: handle, timedRuns: 0 });
    if (!report.verified) {
      wrong++;
      console.log(`cycle ${i}: WRONG, max abs error ${report.maxAbsError}`);
    }
  } else if (values.mode === 'run') {
    await runFused(handle, fused, inputs, ['C']);
  }
  if (i === warmup) afterWarmup = sample(`after ${i}`, live);
  else if (i % every === 0) sample(`after ${i}`, live);
}
const last = sample('end', live);
const seconds = (performance.now() - started) / 1000;
const growth = (last.rss - afterWarmup.rss) / 2 ** 20;
const heapGrowth = (last.heapUsed - afterWarmup.heapUsed) / 2 ** 20;
const signed = (x) => `${x >= 0 ? '+' : ''}${x.toFixed(1)}`;
const measured = Math.max(1, cycles - warmup);
console.log(
  `${cycles} cycles in ${seconds.toFixed(1)} s (${((seconds * 1000) / Math.max(1, cycles)).toFixed(1)} ms each); ` +
    `rss ${first.rssMb} -> ${last.rssMb} MiB, heap ${first.heapUsedMb} -> ${last.heapUsedMb} MiB; ` +
    `after the ${warmup} warm-up cycles: rss ${signed(growth)} MiB, heap ${signed(heapGrowth)} MiB ` +
    `(${signed((heapGrowth * 1024) / measured)} KiB a cycle); live buffers ${first.liveBuffers} -> ${last.liveBuffers}; wrong results ${wrong}`,
);
handle.close();
const failures = [];
if (wrong > 0) failures.push(`${wrong} wrong results`);
if (last.liveBuffers !== first.liveBuffers) failures.push(`${last.liveBuffers - first.liveBuffers} buffers left alive`);
if (heapGrowth > maxHeapGrowthMb) failures.push(`the heap grew ${heapGrowth.toFixed(1)} MiB (more than ${maxHeapGrowthMb})`);
if (growth > maxGrowthMb) failures.push(`RSS grew ${growth.toFixed(1)} MiB (more than ${maxGrowthMb})`);
if (failures.length > 0) {
  console.log(`soak: FAILED: ${failures.join('; ')}`);
  process.exitCode = 1;
} else {
  console.log('soak: ok');
}
