import { describe, expect, it } from 'vitest';
import { chooseMatmulStrategy, F16_F32_16x16x16, resolveTarget, type SubgroupMatrixConfig } from '../src/index.js';
import { subgroupGrid } from '../src/wgsl/subgroup-matrix.js';

/** What an H100 offers through Dawn with the tensor-core toggles (DESIGN.md, facts). */
const H100: SubgroupMatrixConfig[] = [
  { componentType: 'f16', resultComponentType: 'f16', M: 16, N: 8, K: 8 },
  { componentType: 'f16', resultComponentType: 'f32', M: 16, N: 8, K: 16 },
  { componentType: 'f16', resultComponentType: 'f32', M: 16, N: 16, K: 16 },
  { componentType: 'f16', resultComponentType: 'f16', M: 16, N: 16, K: 16 },
  { componentType: 'u8', resultComponentType: 'u32', M: 16, N: 16, K: 32 },
];
const ALL = ['shader-f16', 'subgroups', 'timestamp-query', 'chromium-experimental-subgroup-matrix'];
const LAVAPIPE = ['core-features-and-limits', 'shader-f16', 'subgroups', 'timestamp-query'];

describe('chooseMatmulStrategy', () => {
  it('takes the largest f16→f32 configuration an H100 offers', () => {
    const s = chooseMatmulStrategy(ALL, H100, { input: 'f16', accumulate: 'f32' }, 32);
    expect(s).toEqual({ kind: 'subgroup-matrix', target: { config: H100[2], subgroupSize: 32 } });
  });

  it('matches the accumulator type', () => {
    const s = chooseMatmulStrategy(ALL, H100, { input: 'f16', accumulate: 'f16' });
    expect(s.kind === 'subgroup-matrix' && s.target.config).toEqual(H100[3]);
  });

  it('falls back to SIMT on the software adapter, which has no subgroup matrices', () => {
    expect(chooseMatmulStrategy(LAVAPIPE, [], { input: 'f16', accumulate: 'f32' })).toEqual({
      kind: 'simt',
      reason: 'the adapter has no chromium-experimental-subgroup-matrix',
    });
  });

  it('falls back to SIMT for f32 inputs when no configuration takes them, or without shader-f16', () => {
    expect(chooseMatmulStrategy(ALL, H100, { input: 'f32', accumulate: 'f32' }).kind).toBe('simt');
    const noF16 = ALL.filter((f) => f !== 'shader-f16');
    expect(chooseMatmulStrategy(noF16, H100, { input: 'f16', accumulate: 'f32' })).toMatchObject({ kind: 'simt', reason: 'the adapter has no shader-f16' });
  });

  it('resolves a named target without an adapter', () => {
    expect(resolveTarget(undefined)).toBeUndefined();
    expect(resolveTarget('simt')).toBeUndefined();
    expect(resolveTarget('subgroup-matrix')).toEqual({ config: F16_F32_16x16x16 });
    expect(resolveTarget({ config: H100[1]! })).toEqual({ config: H100[1] });
  });
});

describe('subgroupGrid', () => {
  it('takes 8 subgroups where each keeps at least 4 matrices, split for the fewest loads per multiply', () => {
    expect(subgroupGrid(8, 8)).toEqual([4, 2]); // 128x128 of 16x16: each subgroup 2x4 matrices (the H100's faster split)
    expect(subgroupGrid(8, 16)).toEqual([2, 4]); // 128x128 of 16x8: each 4x4 (4x2 would give 2x8)
    expect(subgroupGrid(4, 4)).toEqual([2, 2]); // 64x64: 4 subgroups of 2x2
    expect(subgroupGrid(2, 2)).toEqual([1, 1]); // 32x32: one subgroup
    expect(subgroupGrid(1, 8)).toEqual([1, 2]);
  });
});
