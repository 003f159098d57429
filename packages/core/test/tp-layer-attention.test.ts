/**
 * The layer's causal attention with f16 operands (the tensor-core path): QKV in f16, the softmax in
 * f32, P cast to f16 for P·V. On lavapipe, alone (the whole layer emulated takes over ten minutes to
 * compile there): SIMT, and both products on subgroup matrices emulated, against a float64 reference
 * that rounds P where the kernel does; the H100 target's WGSL as text; and how the layer chooses it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { f16round } from '@petamoriken/float16';
import type { SubgroupMatrixTarget } from '@syncopate/backends';
import {
  causalAttentionKernel,
  causalMask,
  compileOrThrow,
  emitWgsl,
  fromHalfBits,
  openDeviceGroup,
  toHalfBits,
  tpLayer,
  tpLayerShape,
  UsageError,
  type CausalAttentionShape,
  type DeviceGroup,
} from '@syncopate/core';

/** Two heads of 16 over 32 rows: tiles of 16 queries, KV blocks of 8 (two pieces of V), Q·Kᵀ in slices of 8. */
const SHAPE: CausalAttentionShape = { seq: 32, localHeads: 2, headDim: 16, ranks: 2, queryBlock: 16, kvBlock: 8, sliceD: 8, dtype: 'f32', operands: 'f16' };
const width = SHAPE.localHeads * SHAPE.headDim;

/** 4x4x4 matrices and "subgroups" of 4: the H100's 16x16x16 at 32, scaled down (as ring-attn-f16.test.ts). */
const emulated: SubgroupMatrixTarget = { config: { componentType: 'f16', resultComponentType: 'f32', M: 4, N: 4, K: 4 }, emulate: true, subgroupSize: 4, workgroupBytes: 32768 };
const h100: SubgroupMatrixTarget = { config: { componentType: 'f16', resultComponentType: 'f32', M: 16, N: 16, K: 16 }, subgroupSize: 32, workgroupBytes: 49152 };

/** QKV [S, 3·width] of halves in [−2, 2): scores up to a few units, so P spans several binades. */
function qkvOf(rank: number): Float32Array {
  let x = 12345 + rank * 777;
  const next = () => ((x = (x * 1103515245 + 12345) >>> 0) / 2 ** 32) * 4 - 2;
  return fromHalfBits(toHalfBits(Float32Array.from({ length: SHAPE.seq * 3 * width }, next)));
}

/**
 * O in float64, with P = exp(s − m) rounded to f16 for P·V where m is the running max over the KV
 * blocks so far (blocks of kvBlock rows from row 0, as the kernel visits them); l sums unrounded P.
 * `round` false: the exact softmax.
 */
function reference(qkv: Float32Array, round: boolean): Float64Array {
  const { seq: S, headDim: d, kvBlock: bkv } = SHAPE;
  const cols = 3 * width;
  const o = new Float64Array(S * width);
  for (let h = 0; h < SHAPE.localHeads; h++) {
    for (let i = 0; i < S; i++) {
      let [m, l] = [-Infinity, 0];
      const acc = new Float64Array(d);
      for (let j0 = 0; j0 <= i; j0 += bkv) {
        const scores: number[] = [];
        for (let j = j0; j < Math.min(j0 + bkv, i + 1); j++) {
          let dot = 0;
          for (let c = 0; c < d; c++) dot += qkv[i * cols + h * d + c]! * qkv[j * cols + width + h * d + c]!;
          scores.push(dot / Math.sqrt(d));
        }
        const mNew = Math.max(m, ...scores);
        const alpha = Math.exp(m - mNew);
        l *= alpha;
        for (let c = 0; c < d; c++) acc[c]! *= alpha;
        scores.forEach((s, b) => {
          const p = Math.exp(s - mNew);
          l += p;
          const pv = round ? f16round(p) : p;
          for (let c = 0; c < d; c++) acc[c]! += pv * qkv[(j0 + b) * cols + 2 * width + h * d + c]!;
        });
        m = mNew;
      }
      for (let c = 0; c < d; c++) o[i * width + h * d + c] = acc[c]! / l;
    }
  }
  return o;
}

const maxDiff = (a: ArrayLike<number>, b: ArrayLike<number>) => Array.from(a).reduce((worst, x, i) => Math.max(worst, Math.abs(x - b[i]!)), 0);

let group: DeviceGroup;
beforeAll(async () => {
  group = await openDeviceGroup({ devices: 1, timeoutMs: 280_000 });
});
afterAll(() => group?.close());

describe('the layer\'s attention with f16 operands, alone, on the software adapter', () => {
  const qkv = [qkvOf(0), qkvOf(1)];
  const expected = qkv.map((x) => reference(x, true));

  it('the rounding reference: P rounded moves O by at most 2^-11 of max |V|, and does move it', () => {
    const moved = Math.max(...qkv.map((x, r) => maxDiff(expected[r]!, reference(x, false))));
    expect(moved).toBeGreaterThan(0);
    expect(moved).toBeLessThanOrEqual(2 * 2 ** -11);
  });

  // Scores are f32 sums of exact half products on the GPU, float64 here: a P can round the other way
  // (one f16 ulp, 2^-10 of itself), a few times over a row at most; exp in f32 a few ulp. 2^-9 of max |V| = 2.
  const BOUND = 2 ** -8;
  it.each([
    ['SIMT', undefined],
    ['subgroup matrices, emulated', emulated],
  ] as const)('%s: O against the reference that rounds P', async (_, target) => {
    const program = await group.load(compileOrThrow(causalAttentionKernel(SHAPE), { name: 'local', ranks: SHAPE.ranks, chunks: [] }), { codegen: target ? { target, spinLimit: 1 << 20 } : { spinLimit: 1 << 20 } });
    const tensors = {
      QKV: await group.tensor(program.spec('QKV'), qkv),
      MASK: await group.tensor(program.spec('MASK'), [causalMask(SHAPE), causalMask(SHAPE)]),
      O: await group.tensor(program.spec('O'), { fill: 0 }),
    };
    try {
      await program.run(tensors);
      const o = await tensors.O.read();
      o.forEach((got, r) => expect(maxDiff(got, expected[r]!)).toBeLessThanOrEqual(BOUND));
      // A KV block left out (the diagonal one of the last rows) is far outside the bound.
      const missing = Float64Array.from(expected[0]!, (x, i) => (i >= (SHAPE.seq - 1) * width ? 0 : x));
      expect(maxDiff(o[0]!, missing)).toBeGreaterThan(10 * BOUND);
    } finally {
      Object.values(tensors).forEach((t) => t.destroy());
      program.destroy();
    }
  }, 300_000);
});

describe('the layer\'s attention on an H100\'s subgroup matrices (WGSL as text)', () => {
  it('lowers both products to matrices at the tensor-core tile, the softmax SIMT', () => {
    const s = tpLayerShape({ seq: 4096, hidden: 4096, heads: 32, headDim: 128, ffn: 11008, ranks: 8, dtype: 'f16' });
    expect(s.matrixAttention).toBeDefined();
    const kernel = causalAttentionKernel({ seq: s.seq, localHeads: s.localHeads, headDim: s.headDim, ranks: s.ranks, ...s.matrixAttention!, dtype: 'f16', operands: 'f16' });
    const wgsl = emitWgsl(compileOrThrow(kernel, { name: 'local', ranks: s.ranks, chunks: [] }), { target: h100 });
    expect(wgsl).toContain('enable chromium_experimental_subgroup_matrix;');
    expect(wgsl).toContain('subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&sh_q,');
    expect(wgsl).toContain('subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, row_major>(&sh_k,');
    expect(wgsl).toContain('subgroupMatrixLoad<subgroup_matrix_left<f16, 16, 16>, row_major>(&sh_p_in,');
    expect(wgsl).toContain('subgroupMatrixLoad<subgroup_matrix_right<f16, 16, 16>, row_major>(&sh_v0,');
    expect(wgsl).toMatch(/= exp\(/);
  });

  it('f32 operands do not lower there', () => {
    const kernel = causalAttentionKernel({ ...SHAPE, queryBlock: 16, kvBlock: 16, sliceD: 16, operands: 'f32' });
    expect(() => emitWgsl(compileOrThrow(kernel, { name: 'local', ranks: SHAPE.ranks, chunks: [] }), { target: h100 })).toThrow(/operands are f32/);
  });
});

describe('how the layer chooses its attention', () => {
  const llama = { seq: 4096, hidden: 4096, heads: 32, headDim: 128, ffn: 11008, ranks: 2 } as const;
  it('f16 at Llama-7B shapes has a tensor-core tile; f32 and a head of 8 have none', () => {
    expect(tpLayerShape({ ...llama, dtype: 'f16' }).matrixAttention).toEqual({ queryBlock: 64, kvBlock: 32, sliceD: 64 });
    expect(tpLayerShape({ ...llama, dtype: 'f32' }).matrixAttention).toBeUndefined();
    expect(tpLayerShape({ seq: 16, hidden: 32, heads: 4, headDim: 8, ffn: 64, ranks: 2, dtype: 'f16' }).matrixAttention).toBeUndefined();
  });

  it('a config tile too large for SIMT but not for matrices serves the matrix path alone', () => {
    const s = tpLayerShape({ ...llama, dtype: 'f16', attention: { queryBlock: 32, kvBlock: 32, sliceD: 128 } });
    expect(s.simtAttention).toBe(false);
    expect(s.matrixAttention).toEqual({ queryBlock: 32, kvBlock: 32, sliceD: 128 });
    expect(() => tpLayerShape({ ...llama, dtype: 'f32', attention: { queryBlock: 32, kvBlock: 32, sliceD: 128 } })).toThrow(UsageError);
  });

  it('on the software adapter (no subgroup matrices) auto keeps attention SIMT; subgroup-matrix is refused', async () => {
    const config = { seq: 16, hidden: 32, heads: 4, headDim: 8, ffn: 64, ranks: 2, dtype: 'f16' } as const;
    const layer = tpLayer(config);
    await expect(layer.load(group, { target: 'subgroup-matrix' })).rejects.toThrow(UsageError);
    const loaded = await layer.load(group);
    try {
      expect(loaded.attentionTarget).toBe('simt');
      expect(loaded.gemmTarget).toBe('simt');
    } finally {
      loaded.destroy();
    }
  }, 300_000);
});
