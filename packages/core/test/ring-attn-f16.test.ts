/**
 * ring-attn in f16: f16 Q, K, V, the softmax in f32, P rounded to f16 for P·V, against the reference
 * that rounds P where the kernel does (workloads/ring-attn-f16.ts). The software adapter has f16 and
 * subgroups but no subgroup matrices: the tensor-core path is checked there emulated (each matrix held
 * whole by every invocation, backends wgsl/subgroup-matrix-ops.ts), and its native WGSL as text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SubgroupMatrixTarget } from '@syncopate/backends';
import type { DeviceHandle } from '@syncopate/runtime';
import { cli } from './cli-harness.js';
import { openDevice, runWorkload } from '../src/tools/run.js';
import { type RunOptions } from '../src/tools/run-report.js';
import { attentionReference, gatherShards, RING_ATTN_TOLERANCE, ringAttn } from '../src/workloads/ring-attn.js';
import { attentionReferenceF16 } from '../src/workloads/ring-attn-f16.js';

let device: DeviceHandle;
beforeAll(async () => {
  device = await openDevice();
});
afterAll(() => device?.close());

const base = { workload: 'ring-attn', dtype: 'f16', backend: 'auto', seed: 7, order: 'chunk-arrival' } as const;
const maxDiff = (a: Float32Array, b: Float32Array) => a.reduce((worst, x, i) => Math.max(worst, Math.abs(x - b[i]!)), 0);

describe('the f16 reference', () => {
  const o = { ranks: 4, shape: { m: 256, n: 64, k: 256 }, dtype: 'f16' } as const;
  const inputs = ringAttn.inputs(o, 5);

  it('has f16-exact inputs, and rounds P: near the exact softmax, not equal to it', () => {
    for (const shard of [...inputs.Q!, ...inputs.K!, ...inputs.V!]) for (const x of shard) expect(Math.fround(x)).toBe(x);
    const K = gatherShards(inputs.K!, 256, 64);
    const V = gatherShards(inputs.V!, 256, 64);
    const rounded = attentionReferenceF16(inputs.Q![0]!, K, V, 64, 256, 64, 64);
    const exact = attentionReference(inputs.Q![0]!, K, V, 64, 256, 64);
    const moved = maxDiff(rounded, exact);
    // Each P off by at most half an f16 ulp, 2^-11 of itself: O moves by at most that, and does move.
    expect(moved).toBeGreaterThan(0);
    expect(moved).toBeLessThanOrEqual(2 ** -11);
  });

  it('tells a KV block left out from rounding', () => {
    const full = ringAttn.reference(o, inputs).O![0]!;
    const K = gatherShards(inputs.K!, 256, 64);
    const V = gatherShards(inputs.V!, 256, 64);
    const missing = attentionReference(inputs.Q![0]!, K, V, 64, 256, 64, (j) => j < 192);
    expect(maxDiff(missing, full)).toBeGreaterThan(100 * RING_ATTN_TOLERANCE);
  });
});

describe('ring-attn f16 on the software adapter (SIMT), against the reference', () => {
  const cases: (RunOptions & { devices?: number })[] = [
    { ...base, ranks: 1, shape: { m: 32, n: 16, k: 1 } },
    { ...base, ranks: 2, shape: { m: 64, n: 16, k: 1 } },
    { ...base, ranks: 4, shape: { m: 64, n: 16, k: 1 } },
    // Odd shapes: D = 9 (rows of 18 bytes), 5 ranks of 9 queries; D = 24 over 3 ranks, two chunks each.
    { ...base, ranks: 5, shape: { m: 45, n: 9, k: 1 } },
    { ...base, ranks: 3, shape: { m: 72, n: 24, k: 1 }, chunksPerRank: 2 },
    { ...base, ranks: 2, devices: 2, shape: { m: 64, n: 16, k: 1 } },
    { ...base, ranks: 4, devices: 2, shape: { m: 64, n: 16, k: 1 } },
    { ...base, ranks: 3, devices: 2, shape: { m: 72, n: 24, k: 1 }, gather: 'one-shot' },
  ];
  it.each(cases)('ranks=$ranks devices=$devices $shape.m x $shape.n', async (o) => {
    const report = await runWorkload({ ...o, ...(o.devices ? {} : { device }), codegen: { spinLimit: 1 << 20 }, timeoutMs: 280_000, timedRuns: 1 });
    expect(report.target).toBe('simt');
    expect(report.maxAbsError).toBeLessThanOrEqual(RING_ATTN_TOLERANCE);
    expect(report.verified).toBe(true);
    expect(report.devices).toBe(o.devices ?? 1);
  }, 300_000);
});

/** 4x4x4 matrices and "subgroups" of 4: the same indexing as the H100's 16x16x16 at 32, and quick to compile on lavapipe. */
const emulated: SubgroupMatrixTarget = { config: { componentType: 'f16', resultComponentType: 'f32', M: 4, N: 4, K: 4 }, emulate: true, subgroupSize: 4, workgroupBytes: 32768 };

describe('ring-attn f16 with both products on subgroup matrices, emulated', () => {
  const cases: (RunOptions & { devices?: number })[] = [
    // One slice of D (the tensor-core tile's), and slices of 8 (Q·Kᵀ's partial products summed in registers).
    { ...base, ranks: 2, shape: { m: 64, n: 16, k: 1 }, block: { m: 16, n: 16, k: 16 } },
    { ...base, ranks: 2, shape: { m: 64, n: 32, k: 1 }, block: { m: 16, n: 32, k: 8 } },
    { ...base, ranks: 2, devices: 2, shape: { m: 64, n: 16, k: 1 }, block: { m: 16, n: 16, k: 16 } },
  ];
  it.each(cases)('ranks=$ranks devices=$devices $shape.m x $shape.n, block $block.m x $block.k', async (o) => {
    const report = await runWorkload({ ...o, ...(o.devices ? {} : { device }), codegen: { spinLimit: 1 << 20, target: emulated }, timeoutMs: 280_000, timedRuns: 1 });
    expect(report.maxAbsError).toBeLessThanOrEqual(RING_ATTN_TOLERANCE);
    expect(report.verified).toBe(true);
  }, 300_000);
});

describe('syncopate compile ring-attn --dtype f16 --target subgroup-matrix (an H100)', () => {
  it('emits both products on subgroup matrices at the tensor-core tile, the softmax on SIMT registers', async () => {
    const r = await cli('compile', 'ring-attn', '--dtype', 'f16', '--emit', 'wgsl', '--target', 'subgroup-matrix');
    expect(r.code).toBe(0);
    const wgsl = r.out;
    expect(wgsl).toContain('enable f16;');
    expect(wgsl).toContain('enable chromium_experimental_subgroup_matrix;');
    // The default shape (S 256, D 64, 4 ranks) at ringAttentionTensorCoreBlock's 32x64x64.
    expect(wgsl).toMatch(/\/\/ 4 ranks x 2 tiles of 32x64,/);
    expect(wgsl).toContain('@compute @workgroup_size(256)');
    expect(wgsl).toContain('@builtin(subgroup_id) sg_id: u32');
    // Q·Kᵀ: Q left, K staged transposed as the right operand; P·V: P (cast to f16) left, V right.
    expect(wgsl).toContain('subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&sh_q,');
    expect(wgsl).toContain('subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, row_major>(&sh_k,');
    expect(wgsl).toContain('subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&sh_p_in,');
    expect(wgsl).toContain('subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, row_major>(&sh_v,');
    expect(wgsl.match(/subgroupMatrixStore<row_major>\(&sh_dot,/g)).toHaveLength(2);
    // Four 16-deep steps of each product (D = 64, KV block 64), unrolled.
    expect(wgsl.match(/subgroupMatrixMultiplyAccumulate/g)).toHaveLength(8);
    expect(wgsl).toContain('var<workgroup> sh_k: array<f16, 4608>; // 64x64, rows padded to 72, for matrix loads');
    // The softmax stays SIMT: row max and sum through the reduction scratch, exp in f32 registers.
    expect(wgsl).toContain('wg_reduce');
    expect(wgsl).toMatch(/= exp\(/);
  });

  it('an f32 ring-attn does not lower there, and says why', async () => {
    const r = await cli('compile', 'ring-attn', '--ranks', '2', '--m', '64', '--n', '16', '--emit', 'wgsl', '--target', 'subgroup-matrix');
    expect(r.code).toBe(1);
    expect(r.err).toContain('dots on subgroup matrices: %qk\'s operands are f32 and f32; the 16x16x16 configuration takes f16');
  });
});
