/**
 * Is a fused kernel's time a property of the kernel, or of where its buffers landed? Opens the same
 * kernel in several sessions, one after another in one process (fresh buffers and pipeline each),
 * and times each: if the sessions disagree as much as separate processes do, placement is the cause.
 *
 *   node dist/stability.mjs [--sessions N] [--out DIR]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { compileOrThrow, FusedSession, getWorkload, lowerToWgsl, openDevice } from '@syncopate/core';
import { summarize } from './stats.js';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { sessions: { type: 'string' }, out: { type: 'string' } } });
  const sessions = Number(values.sessions ?? 6);
  const out = values.out ?? process.env.OUT ?? '.';
  const device = await openDevice();
  const results: Record<string, unknown>[] = [];
  try {
    for (const [workload, ranks] of [['ag-gemm', 1], ['gemm-rs', 1], ['ag-gemm', 2], ['gemm-rs', 2]] as const) {
      const w = getWorkload(workload);
      const shape = workload === 'ag-gemm' ? { m: 4096, n: 4096 / ranks, k: 4096 } : { m: 4096, n: 4096, k: 4096 / ranks };
      const o = { ranks, shape, dtype: 'f32' as const, block: { m: 128, n: 128, k: 8 } };
      const { kernel, plan } = w.build(o);
      const fused = lowerToWgsl(compileOrThrow(kernel, plan));
      // The workload's random inputs, as the suite times: a GPU draws less power on zeros.
      const inputs = w.inputs(o, 1);
      const medians: number[] = [];
      for (let s = 0; s < sessions; s++) {
        const session = await FusedSession.open(device, fused, inputs);
        try {
          await session.runBackToBack(10);
          const r = await session.runBackToBack(10);
          medians.push(summarize(r.gpuMs ?? [r.wallMs / 10]).median);
        } finally {
          session.destroy();
        }
      }
      const row = { workload, ranks, shape, sessionMedians: medians.map((m) => Number(m.toFixed(3))) };
      results.push(row);
      console.log(JSON.stringify(row));
    }
  } finally {
    device.close();
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'stability.json'), JSON.stringify(results, null, 2));
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
  process.exitCode = 1;
});
