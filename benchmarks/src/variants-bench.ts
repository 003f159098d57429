/**
 * Every workload three ways (sequential, decomposed, fused: see packages/core/src/tools/bench.ts) with 2, 4
 * and 8 ranks sharing one device, and with ranks on two devices, at the shape of one size³ GEMM of
 * total work; each variant's timed kernel checked against the CPU reference on 16 sampled rows of C. Prints
 * JSON lines and a Markdown table, writes variants.json and variants.md into the directory given.
 *
 *   node dist/variants.mjs [--quick] [--out DIR]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { benchTable, benchWorkload, WARMUP_BUSY_MS, type BenchReport } from '@syncopate/core';
import { openDevices, type DeviceHandle } from '@syncopate/runtime';

const BLOCK = { m: 128, n: 128, k: 8 };

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { quick: { type: 'boolean' }, out: { type: 'string' } } });
  const out = values.out ?? process.env.OUT ?? '.';
  const quick = values.quick ?? false;
  const size = quick ? 1024 : 4096;
  const devices = await openDevices(2, { device: { requiredLimits: 'adapter-max' } });
  const reports: BenchReport[] = [];
  const lines: unknown[] = [];
  try {
    const cases: { ranks: number; handles: DeviceHandle[] }[] = [
      ...[2, 4, 8].map((ranks) => ({ ranks, handles: devices.slice(0, 1) })),
      ...[2, 4].map((ranks) => ({ ranks, handles: devices })),
    ];
    for (const workload of ['ag-gemm', 'gemm-rs'] as const) {
      for (const { ranks, handles } of cases) {
        const base = { workload, ranks, dtype: 'f32' as const, order: 'chunk-arrival' as const, seed: 1, handles, devices: handles.length };
        // The same total work as a size³ GEMM: ag-gemm splits N over ranks, gemm-rs splits K.
        const shape = workload === 'ag-gemm' ? { m: size, n: size / ranks, k: size } : { m: size, n: size, k: size / ranks };
        // The timed kernel is the checked one: its first run, on 16 sampled rows of C.
        const report = await benchWorkload({ ...base, shape, block: BLOCK, verifyRows: 16, runs: quick ? 5 : 20, warmup: 5, warmupBusyMs: WARMUP_BUSY_MS });
        reports.push(report);
        lines.push(report);
        console.log(JSON.stringify(report));
      }
    }
  } finally {
    devices.forEach((d) => d.close());
    mkdirSync(out, { recursive: true });
    const table = benchTable(reports);
    console.log(table);
    writeFileSync(join(out, 'variants.json'), JSON.stringify({ results: lines }, null, 2));
    writeFileSync(join(out, 'variants.md'), table + '\n');
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
  process.exitCode = 1;
});
