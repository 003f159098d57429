import { describe, expect, it } from 'vitest';
import { chooseMatmulStrategy, F16_F32_16x16x16, resolveTarget, type SubgroupMatrixConfig } from '../src/index.js';

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
