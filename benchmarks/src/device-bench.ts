/**
 * The GPU-machine benchmark: the standalone GEMM our codegen emits, and the fused ag-gemm and
 * gemm-rs kernels with 2, 4 and 8 ranks on one device, each verified against the CPU reference at a
 * smaller shape first. Prints a table and writes results.json into the directory given (or $OUT).
 *
 *   node dist/bench.mjs [--quick] [--out DIR]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  compileOrThrow,
  FusedSession,
  gemmKernel,
  getWorkload,
  lowerToWgsl,
  openDevice,
  runWorkload,
  type RunReport,
} from '@syncopate/core';
import type { DeviceHandle } from '@syncopate/runtime';
import { summarize, zeroInputs, type Summary } from './stats.js';

interface Block {
  readonly m: number;
  readonly n: number;
  readonly k: number;
}

/**
 * Warm-up launches, then `runs` timed ones, each batch in one submission: with a host round trip
 * between launches the GPU idles and lowers its clocks (seen on the H100: 1980 → ~800 MHz within
 * seconds), and the timings then measure the clock governor, not the kernel.
 */
async function timeSession(session: FusedSession, warmup: number, runs: number): Promise<{ ms: Summary; timing: string }> {
  await session.runBackToBack(warmup);
  const r = await session.runBackToBack(runs);
  return { ms: summarize(r.gpuMs ?? [r.wallMs / runs]), timing: r.timing };
}

async function standaloneGemm(device: DeviceHandle, size: number, block: Block, runs: number) {
  const kernel = gemmKernel({ m: size, n: size, k: size, blockM: block.m, blockN: block.n, blockK: block.k }, { name: 'gemm' });
  const fused = lowerToWgsl(compileOrThrow(kernel, { ranks: 1, chunks: [] }));
  const session = await FusedSession.open(device, fused, zeroInputs(kernel.tensors, 1));
  try {
    const { ms, timing } = await timeSession(session, 10, runs);
    const tflops = (2 * size ** 3) / (ms.median * 1e-3) / 1e12;
    return { kind: 'gemm', size, block, ms, timing, tflops };
  } finally {
    session.destroy();
  }
}

interface Variant {
  readonly order?: 'row-major' | 'grouped' | 'chunk-arrival';
  readonly partElements?: number;
}

async function fusedWorkload(device: DeviceHandle, workload: 'ag-gemm' | 'gemm-rs', ranks: number, size: number, block: Block, runs: number, variant: Variant = {}) {
  const w = getWorkload(workload);
  // The same total work as a size³ GEMM: ag-gemm splits N over ranks, gemm-rs splits K.
  const shape = workload === 'ag-gemm' ? { m: size, n: size / ranks, k: size } : { m: size, n: size, k: size / ranks };
  const o = { ranks, shape, dtype: 'f32' as const, block };
  const { kernel, plan } = w.build(o);
  const compiled = compileOrThrow(kernel, plan, variant.order ? { passOptions: { 'reorder-tiles': { order: variant.order } } } : {});
  const fused = lowerToWgsl(compiled, variant.partElements ? { partElements: variant.partElements } : {});
  const session = await FusedSession.open(device, fused, zeroInputs(kernel.tensors, ranks));
  try {
    const { ms, timing } = await timeSession(session, 10, runs);
    const tflops = (2 * size ** 3) / (ms.median * 1e-3) / 1e12;
    return { kind: workload, ranks, shape, block, chunks: plan.chunks.length, parts: fused.chunkParts.reduce((a, b) => a + b, 0), variant, ms, timing, tflops };
  } finally {
    session.destroy();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { quick: { type: 'boolean' }, out: { type: 'string' } } });
  const out = values.out ?? process.env.OUT ?? '.';
  const quick = values.quick ?? false;
  const size = quick ? 1024 : 4096;
  const runs = quick ? 5 : 20;
  const device = await openDevice();
  const info = device.adapterInfo;
  const adapter = [info.vendor, info.architecture, info.device, info.description].filter(Boolean).join(' ');
  console.log(`device: ${adapter}; timestamps: ${device.hasTimestamps}`);
  const results: Record<string, unknown>[] = [];
  const report = (r: Record<string, unknown>) => {
    results.push(r);
    console.log(JSON.stringify(r));
  };
  try {
    // Correctness first, at shapes whose CPU reference is quick.
    const checks: RunReport[] = [];
    for (const workload of ['ag-gemm', 'gemm-rs'] as const) {
      for (const ranks of [2, 4, 8]) {
        checks.push(await runWorkload({ workload, ranks, shape: { m: 512, n: 256, k: 256 }, dtype: 'f32', order: 'chunk-arrival', backend: 'auto', seed: 1, device }));
      }
    }
    for (const c of checks) report({ kind: 'verify', workload: c.workload, ranks: c.ranks, shape: c.shape, verified: c.verified, maxAbsError: c.maxAbsError });

    const blocks: Block[] = [
      { m: 64, n: 64, k: 32 },
      { m: 128, n: 128, k: 16 },
      { m: 128, n: 128, k: 8 },
    ];
    for (const block of blocks) report(await standaloneGemm(device, size, block, runs));
    const block = blocks[2]!;
    for (const workload of ['ag-gemm', 'gemm-rs'] as const) {
      for (const ranks of [1, 2, 4, 8]) report(await fusedWorkload(device, workload, ranks, size, block, runs));
    }
    // Ablations at 2 ranks: tile order, and how finely chunks are cut into parts.
    for (const workload of ['ag-gemm', 'gemm-rs'] as const) {
      for (const variant of [{ order: 'row-major' }, { partElements: 8192 }, { partElements: 262144 }, { partElements: 1 << 22 }] as const) {
        report(await fusedWorkload(device, workload, 2, size, block, runs, variant));
      }
    }
  } finally {
    device.close();
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'results.json'), JSON.stringify({ adapter, results }, null, 2));
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
  process.exitCode = 1;
});
