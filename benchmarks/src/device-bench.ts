/**
 * The GPU-machine benchmark: the GEMM our codegen emits (gemm-rs on one rank: no chunks) at three
 * tiles, and the fused ag-gemm and gemm-rs kernels with 1, 2, 4 and 8 ranks on one device, with
 * ablations of the tile order and the part size. Every row times the kernel it checked: the workload's
 * random inputs, its first run compared with the CPU reference on 16 sampled rows (runWorkload's
 * verifyRows), then warm-up and timed runs back to back. Prints JSON lines and writes results.json
 * into the directory given (or $OUT).
 *
 *   node dist/bench.mjs [--quick] [--out DIR]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openDevice, runWorkload, WARMUP_BUSY_MS } from '@syncopate/core';
import type { DeviceHandle } from '@syncopate/runtime';

interface Block {
  readonly m: number;
  readonly n: number;
  readonly k: number;
}

interface Variant {
  readonly order?: 'row-major' | 'grouped' | 'chunk-arrival';
  readonly partElements?: number;
}

async function fusedWorkload(device: DeviceHandle, workload: 'ag-gemm' | 'gemm-rs', ranks: number, size: number, block: Block, runs: number, variant: Variant = {}) {
  // The same total work as a size³ GEMM: ag-gemm splits N over ranks, gemm-rs splits K.
  const shape = workload === 'ag-gemm' ? { m: size, n: size / ranks, k: size } : { m: size, n: size, k: size / ranks };
  const r = await runWorkload({
    workload,
    ranks,
    shape,
    block,
    dtype: 'f32',
    order: variant.order ?? 'chunk-arrival',
    backend: 'auto',
    seed: 1,
    device,
    verifyRows: 16,
    warmupRuns: 10,
    warmupBusyMs: WARMUP_BUSY_MS,
    timedRuns: runs,
    ...(variant.partElements ? { codegen: { partElements: variant.partElements } } : {}),
  });
  const tflops = (2 * size ** 3) / (r.timings.median * 1e-3) / 1e12;
  return { kind: ranks === 1 ? 'gemm' : workload, ranks, shape, block, variant, verified: r.verified, maxAbsError: r.maxAbsError, ms: r.timings, timing: r.timing, tflops };
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
    const blocks: Block[] = [
      { m: 64, n: 64, k: 32 },
      { m: 128, n: 128, k: 16 },
      { m: 128, n: 128, k: 8 },
    ];
    for (const block of blocks) report(await fusedWorkload(device, 'gemm-rs', 1, size, block, runs));
    const block = blocks[2]!;
    for (const workload of ['ag-gemm', 'gemm-rs'] as const) {
      for (const ranks of [2, 4, 8]) report(await fusedWorkload(device, workload, ranks, size, block, runs));
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
