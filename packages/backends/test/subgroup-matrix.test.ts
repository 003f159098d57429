import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { gemmKernel, type ChunkPlan, type Module } from '@syncopate/ir';
import { alignChunksPass, attachPlan, insertBarriers, reorderTiles, ringAllGather, runPipeline } from '@syncopate/passes';
import { emitFusedKernel, type CodegenOptions } from '../src/index.js';

function lowered(kernel: Module, plan?: ChunkPlan): Module {
  const passes = plan ? [attachPlan, alignChunksPass, reorderTiles, insertBarriers] : [reorderTiles];
  const r = runPipeline(passes, kernel, { ...(plan && { plan }), options: {} });
  if (E.isLeft(r)) throw new Error(r.left.map((d) => d.message).join('\n'));
  return r.right.module;
}

function wgsl(module: Module, options: CodegenOptions): string {
  const fused = emitFusedKernel(module, options);
  if (E.isLeft(fused)) throw new Error(fused.left.map((d) => d.message).join('\n'));
  return fused.right.wgsl;
}

function golden(name: string, text: string): void {
  const file = join(import.meta.dirname, 'golden', name);
  if (process.env.UPDATE_GOLDEN === '1') writeFileSync(file, text);
  expect(existsSync(file)).toBe(true);
  expect(text).toBe(readFileSync(file, 'utf8'));
}

/** An edge in every dimension: 200 = 128 + 72 rows, 136 = 128 + 8 columns, K = 80 = 2·32 + 16. */
const gemm = () => lowered(gemmKernel({ m: 200, n: 136, k: 80, blockM: 128, blockN: 128, blockK: 32, dtype: 'f16' }));

describe('subgroup-matrix lowering', () => {
  it('matches the golden kernel for a standalone f16 GEMM with edge tiles', () => {
    golden('gemm-f16-subgroup-matrix.wgsl', wgsl(gemm(), { target: 'subgroup-matrix' }));
  });

  it('matches the golden kernel for a 2-rank f16 AllGather + GEMM', () => {
    const ag = lowered(
      gemmKernel({ m: 128, n: 64, k: 64, blockM: 32, blockN: 32, blockK: 16, dtype: 'f16' }, { ranks: 2, distribute: 'ag', name: 'ag_gemm' }),
      ringAllGather({ ranks: 2, tensor: { name: 'A', shape: [128, 64] }, axis: 0 }),
    );
    golden('ag-gemm-2-f16-subgroup-matrix.wgsl', wgsl(ag, { target: 'subgroup-matrix' }));
  });

  it("is the SIMT kernel with target 'simt' or none", () => {
    expect(wgsl(gemm(), { target: 'simt' })).toBe(wgsl(gemm(), {}));
    expect(wgsl(gemm(), {})).not.toContain('subgroup');
  });

  it('lays a 128x128 tile out as 4x2 subgroups of 2x4 matrices, 256 invocations, A and B double-buffered', () => {
    const fused = emitFusedKernel(gemm(), { target: 'subgroup-matrix' });
    if (E.isLeft(fused)) throw new Error('unreachable');
    expect(fused.right.workgroupSize).toEqual([256, 1]);
    expect(fused.right.wgsl).toContain('4x2 subgroups of 32, each 2x4 matrices; 2 staging copies');
    // Rows padded by 8 halves: A [128][40], B [32][136], two copies each.
    expect(fused.right.wgsl).toContain('var<workgroup> sh_a: array<f16, 10240>;');
    expect(fused.right.wgsl).toContain('var<workgroup> sh_b: array<f16, 8704>;');
  });

  it('uses the current load/store form and names every matrix by a constant index', () => {
    const text = wgsl(gemm(), { target: 'subgroup-matrix' });
    const calls = text.split('\n').filter((l) => /subgroupMatrix(Load|Store)/.test(l));
    expect(calls.length).toBeGreaterThan(0);
    for (const line of calls) expect(line).toMatch(/subgroupMatrix(Load<[^;]*, row_major>|Store<row_major>)\(/);
    // No `, true,` / `, false,` majorness argument (the deprecated form), and no matrix indexed by a variable.
    expect(text).not.toMatch(/subgroupMatrix(Load|Store)[^;]*, (true|false), /);
    expect(text).not.toMatch(/(v_acc\w*|ma|mb|pm_\w+)\[[a-z]/);
  });

  it('fetches inside tiles of read-only tensors by 16-byte words through vec4 views bound after the tables', () => {
    const fused = emitFusedKernel(gemm(), { target: 'subgroup-matrix' });
    if (E.isLeft(fused)) throw new Error('unreachable');
    const { wgsl: text, views, tables } = fused.right;
    expect(views).toEqual([
      { binding: tables.binding + 1, tensor: 'A' },
      { binding: tables.binding + 2, tensor: 'B' },
    ]);
    // Both bindings of a buffer read-only (WebGPU rejects a writable one beside another binding of it).
    expect(text).toContain('@group(0) @binding(0) var<storage, read> t_A: array<f16>;');
    expect(text).toContain(`@group(0) @binding(${tables.binding + 1}) var<storage, read> v4_A: array<vec4<u32>>;`);
    expect(text).toContain('@group(0) @binding(2) var<storage, read_write> t_C: array<f32>;');
    expect(text).toMatch(/pv_\w+\[0\] = v4_A\[/);
    expect(text).not.toMatch(/subgroupMatrixLoad<[^;]*>\(&t_/);
  });

  it('copies tiles of a tensor the kernel writes (AllGather into A) by matrices, not through a view', () => {
    const ag = lowered(
      gemmKernel({ m: 128, n: 64, k: 64, blockM: 32, blockN: 32, blockK: 16, dtype: 'f16' }, { ranks: 2, distribute: 'ag', name: 'ag_gemm' }),
      ringAllGather({ ranks: 2, tensor: { name: 'A', shape: [128, 64] }, axis: 0 }),
    );
    const fused = emitFusedKernel(ag, { target: 'subgroup-matrix' });
    if (E.isLeft(fused)) throw new Error('unreachable');
    expect(fused.right.views?.map((v) => v.tensor)).toEqual(['B']);
    expect(fused.right.wgsl).toContain('var<storage, read_write> t_A: array<f16>;');
    expect(fused.right.wgsl).toMatch(/subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>\(&t_A/);
  });

  it('stages through words or matrices only where the tensor rows are whole 16-byte words, and stores C directly only then', () => {
    const aligned = wgsl(gemm(), { target: 'subgroup-matrix' });
    expect(aligned).toMatch(/subgroupMatrixStore<row_major>\(&t_C/);
    const odd = wgsl(lowered(gemmKernel({ m: 200, n: 135, k: 81, blockM: 128, blockN: 128, blockK: 32, dtype: 'f16' })), { target: 'subgroup-matrix' });
    expect(odd).not.toMatch(/subgroupMatrixLoad<[^;]*>\(&t_/);
    expect(odd).not.toContain('v4_');
    expect(odd).not.toMatch(/subgroupMatrixStore<row_major>\(&t_C/);
    expect(odd).toContain('let whole = false;');
  });

  it('rejects f32 operands and tiles that are not a multiple of the configuration', () => {
    const f32 = emitFusedKernel(lowered(gemmKernel({ m: 64, n: 64, k: 64 })), { target: 'subgroup-matrix' });
    expect(E.isLeft(f32) && f32.left[0]!.message).toMatch(/dot operands are f32 and f32/);
    const odd = emitFusedKernel(lowered(gemmKernel({ m: 64, n: 64, k: 64, blockM: 24, blockN: 32, blockK: 16, dtype: 'f16' })), { target: 'subgroup-matrix' });
    expect(E.isLeft(odd) && odd.left[0]!.message).toMatch(/not a multiple of the configuration's 16x16/);
  });

  it('never loads or stores a matrix straight from a tensor whose rows are narrower than the matrix (WGSL minimum stride)', () => {
    // N = 8: C's rows cannot hold a 16-wide result matrix; K = 8: A's rows cannot hold a 16-wide left
    // operand. Such dots go through workgroup memory (the matrix-dots path), whose rows are wide enough.
    for (const shape of [{ n: 8, k: 64, blockN: 16 }, { n: 64, k: 8, blockN: 32 }]) {
      const text = wgsl(lowered(gemmKernel({ m: 64, blockM: 32, blockK: 16, dtype: 'f16', ...shape }, { ranks: 2, distribute: 'ag', name: 'ag_gemm' }), ringAllGather({ ranks: 2, tensor: { name: 'A', shape: [64, shape.k] }, axis: 0 })), { target: 'subgroup-matrix' });
      expect(text).toMatch(/subgroupMatrixLoad/);
      expect(text).not.toMatch(/subgroupMatrix(Load|Store)<[^;]*>\(&t_/);
    }
  });
});

/** Bytes of a WGSL type as the emitters write them: scalars, vectors, arrays of those, and the module's structs. */
function typeBytes(type: string, structs: ReadonlyMap<string, string[]>): number {
  const scalar: Record<string, number> = { f16: 2, f32: 4, u32: 4, i32: 4 };
  const array = /^array<(.+), (\d+)>$/.exec(type);
  if (array) return typeBytes(array[1]!, structs) * Number(array[2]);
  const vector = /^vec([234])<(\w+)>$/.exec(type);
  if (vector) return Number(vector[1]) * scalar[vector[2]!]!;
  if (structs.has(type)) return structs.get(type)!.reduce((sum, member) => sum + typeBytes(member, structs), 0);
  if (scalar[type] === undefined) throw new Error(`typeBytes: ${type}`);
  return scalar[type];
}

function workgroupVariables(text: string): { name: string; bytes: number }[] {
  const structs = new Map<string, string[]>();
  for (const [, name, body] of text.matchAll(/struct (\w+) \{([^}]*)\}/g)) structs.set(name!, body!.split(',').map((m) => m.split(':')[1]!.trim()).filter(Boolean));
  return [...text.matchAll(/var<workgroup> (\w+): ([^;]+);/g)].map(([, name, type]) => ({ name: name!, bytes: typeBytes(type!.trim(), structs) }));
}

describe('workgroup variables', () => {
  // On the H100 a lone u32 beside the staged arrays made subgroup-matrix loads from them read zeros
  // (benchmarks/results/h100-2026-11-23/subgroup-matrix-v3/): every kernel keeps them in 16-byte words.
  const ag = (dtype: 'f16' | 'f32') =>
    lowered(
      gemmKernel({ m: 128, n: 64, k: 64, blockM: 32, blockN: 32, blockK: 16, dtype }, { ranks: 2, distribute: 'ag', name: 'ag_gemm' }),
      ringAllGather({ ranks: 2, tensor: { name: 'A', shape: [128, 64] }, axis: 0 }),
    );
  const odd = () => lowered(gemmKernel({ m: 30, n: 30, k: 30, blockM: 6, blockN: 10, blockK: 5, dtype: 'f16' }));
  const kernels: [string, () => string][] = [
    ['a subgroup-matrix GEMM', () => wgsl(gemm(), { target: 'subgroup-matrix' })],
    ['a subgroup-matrix AllGather + GEMM (signals, pending parts)', () => wgsl(ag('f16'), { target: 'subgroup-matrix' })],
    ['a SIMT AllGather + GEMM', () => wgsl(ag('f32'), {})],
    ['a SIMT f16 GEMM with 6x5 and 5x10 staged tiles', () => wgsl(odd(), {})],
  ];

  it.each(kernels)('are whole 16-byte words in %s', (_name, emit) => {
    const variables = workgroupVariables(emit());
    expect(variables.length).toBeGreaterThan(1);
    expect(variables.filter((v) => v.bytes % 16 !== 0)).toEqual([]);
  });

  it('counts bytes the way the check above relies on', () => {
    expect(workgroupVariables('struct W { u: u32, n: u32, unused: vec2<u32> }\nvar<workgroup> wg: W;\nvar<workgroup> x: array<f16, 12>;')).toEqual([
      { name: 'wg', bytes: 16 },
      { name: 'x', bytes: 24 },
    ]);
  });
});
