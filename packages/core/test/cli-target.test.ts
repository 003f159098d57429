/**
 * `--target`: compile names how dots lower without an adapter (this machine's software adapter has no
 * subgroup matrices, and compile never asks it); run picks it per device and refuses subgroup matrices
 * where the device has none.
 */
import { describe, expect, it } from 'vitest';
import { cli } from './cli-harness.js';
import { defaultBlock } from '../src/workloads/index.js';

const shape = { m: 128, n: 64, k: 64 };
const f16 = ['--dtype', 'f16', '--ranks', '2', '--m', String(shape.m), '--n', String(shape.n), '--k', String(shape.k)];

describe('syncopate compile --target', () => {
  it('prints the subgroup-matrix WGSL on a machine without the feature', async () => {
    const r = await cli('compile', 'ag-gemm', ...f16, '--emit', 'wgsl', '--target', 'subgroup-matrix');
    expect(r.code).toBe(0);
    expect(r.out).toContain('enable chromium_experimental_subgroup_matrix;');
    expect(r.out).toMatch(/subgroupMatrixMultiplyAccumulate/);
    expect(r.out).toMatch(/subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>/);
    // ag-gemm's tensor-core tile (128x256x32, 128x64x32 at this shape), as run takes it on a device with them.
    expect(r.out).toMatch(/\/\/ 2 ranks x \d+ tiles of 128x64,/);
    expect(r.out).toContain('var<workgroup> sh_a: array<f16, 10240>; // 2 x 128x32, rows padded to 40');
  });

  it('prints the SIMT WGSL with --target simt, the same as without --target', async () => {
    const simt = await cli('compile', 'ag-gemm', ...f16, '--emit', 'wgsl', '--target', 'simt');
    const plain = await cli('compile', 'ag-gemm', ...f16, '--emit', 'wgsl');
    expect(simt.code).toBe(0);
    expect(simt.out).toBe(plain.out);
    expect(simt.out).not.toContain('subgroup');
  });

  it('rejects a target it does not know, and --target without WGSL to emit (exit 2)', async () => {
    const bad = await cli('compile', 'ag-gemm', ...f16, '--emit', 'wgsl', '--target', 'tensor-core');
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("--target must be one of simt, subgroup-matrix, got 'tensor-core'");
    const ir = await cli('compile', 'ag-gemm', ...f16, '--target', 'simt');
    expect(ir.code).toBe(2);
    expect(ir.err).toContain('--target chooses how dots lower to WGSL; it applies with --emit wgsl or --dump-wgsl');
  });

  it('says why an f32 kernel does not lower to subgroup matrices (exit 1)', async () => {
    const r = await cli('compile', 'ag-gemm', '--ranks', '2', '--m', '128', '--n', '64', '--k', '64', '--emit', 'wgsl', '--target', 'subgroup-matrix');
    expect(r.code).toBe(1);
    expect(r.err).toContain('did not lower to WGSL');
    expect(r.err).toContain('dot operands are f32 and f32; the 16x16x16 configuration takes f16');
  });
});

describe('syncopate run --target', () => {
  it('refuses subgroup-matrix on the software adapter, saying what it lacks (exit 2)', async () => {
    const r = await cli('run', 'ag-gemm', ...f16, '--target', 'subgroup-matrix');
    expect(r.code).toBe(2);
    expect(r.err).toContain('--target subgroup-matrix: the adapter has no chromium-experimental-subgroup-matrix for f16 inputs accumulated in f32; use --target simt or auto');
  }, 60_000);

  it('runs SIMT under auto there, and says so in the report', async () => {
    const r = await cli('run', 'ag-gemm', ...f16, '--json');
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out) as { target: string; block: unknown; verified: boolean; maxAbsError: number };
    expect(report.target).toBe('simt');
    // SIMT keeps the workload's default tile, not its tensor-core one (128x128x64, shrunk to the shape).
    expect(report.block).toEqual(defaultBlock(shape));
    expect(report.maxAbsError).toBe(0);
  }, 60_000);

  it('rejects a run target it does not know', async () => {
    const r = await cli('run', 'ag-gemm', ...f16, '--target', 'gpu');
    expect(r.code).toBe(2);
    expect(r.err).toContain("--target must be one of auto, simt, subgroup-matrix, got 'gpu'");
  });
});
