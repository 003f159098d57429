/**
 * Which of the suite's one-device rows a change touches: the sha256 (first 12 hex digits) of the WGSL
 * each f32 row lowers to (SIMT at the workload's tile, the default chunk-arrival order), as a run lowers it. Two
 * builds whose hashes agree on a row ran the same kernel there, so a row measured on one stands for
 * the other (compile-hashes.txt beside a session's results). f16 rows lower through the device's
 * subgroup-matrix configuration, which needs the adapter: not hashed here.
 *
 *   node dist/wgsl-hashes.mjs [--size 4096]
 */
import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import { compileOrThrow, getWorkload, lowerToWgsl, type WorkloadName } from '@syncopate/core';
import { gpuShape } from './suite-shapes.js';

const ROWS: [WorkloadName, number[]][] = [
  ['gemm-rs', [2, 4, 8]],
  ['ag-gemm', [2, 4, 8]],
  ['gemv-ar', [4]],
  ['a2a-gemm', [4]],
  ['embed-a2a', [4]],
  ['ring-attn', [4]],
];

const { values } = parseArgs({ options: { size: { type: 'string' } } });
const size = Number(values.size ?? 4096);
for (const [workload, rankCounts] of ROWS) {
  for (const ranks of rankCounts) {
    const o = { ranks, shape: gpuShape(workload, ranks, size), dtype: 'f32' as const };
    const built = getWorkload(workload).build(o);
    const wgsl = lowerToWgsl(compileOrThrow(built.kernel, built.plan), { target: 'simt' }).wgsl;
    console.log(`${workload} f32 ranks ${ranks} ${createHash('sha256').update(wgsl).digest('hex').slice(0, 12)}`);
  }
}
