/**
 * The tensor-parallel transformer layer (packages/core/src/layers), built on the public API: its ten
 * steps run over one device and two, at 2 and 4 ranks, f32 and f16, each rank's rows of the output
 * checked against the float64 CPU reference; a bad config and bad inputs refused before anything runs.
 *
 * Shapes are tiny (lavapipe runs them on the CPU): S = 16, H = 32, 4 heads of 8, F = 64. A cold
 * shader cache makes the first run of each kernel compile it (tens of seconds on a loaded 2-core
 * machine); warm, a case takes about a second. Hence the long timeouts.
 */
import { describe, expect, it } from 'vitest';
import {
  openDeviceGroup,
  TensorInputError,
  tpLayer,
  tpLayerInputs,
  tpLayerReference,
  UsageError,
  type LoadedTpLayer,
  type TpLayerConfig,
  type TpLayerStep,
  type TpLayerVariant,
} from '@syncopate/core';

const SHAPE = { seq: 16, hidden: 32, heads: 4, headDim: 8, ffn: 64 } as const;
const COLD_COMPILE_MS = 600_000;

/**
 * Largest |GPU − reference| over every rank's rows, relative to the largest |reference| (about 1.6
 * here: X is uniform in [−1, 1) and every weight is scaled by 1/√fan-in, so each step's output is
 * about as large as its input).
 *
 * f32: 1e-5. Each value passes through two RMSNorms, five GEMMs of K ≤ 64 terms, a softmax and a
 * SiLU; f32 rounds by u = 6e-8 a step, a K-term sum by about √K·u ≈ 5e-7 (γ_K·Σ|a·b| ≈ 4e-6 at worst),
 * WGSL's exp and inverseSqrt by a few ulp. Measured: 1.1e-7 to 1.8e-7 (every case below). A
 * step done wrong moves the output by far more: attention without its causal mask by about 0.1
 * (checked below).
 *
 * f16: 8·2⁻¹¹ ≈ 3.9e-3. Inputs are rounded to halves before either side sees them, so what differs
 * is what the GPU stores in f16 and the reference does not round: the output itself (2⁻¹¹ relative,
 * half an ulp), X1 (2⁻¹¹, added straight into the output), and the three GEMM inputs Xn, O and
 * SiLU·up (2⁻¹¹ each, carried through GEMMs whose weights have unit norm): about 5·2⁻¹¹ at worst,
 * with margin 8·2⁻¹¹. Measured: 5.4e-4 and 7.1e-4.
 */
const TOLERANCE = { f32: 1e-5, f16: 8 * 2 ** -11 } as const;

/** Runs the layer (its steps as `edit` leaves them) and returns its error against the reference, relative to max |reference|. */
async function layerError(
  config: TpLayerConfig,
  devices: number,
  options: {
    variant?: TpLayerVariant;
    edit?: (steps: TpLayerStep[], loaded: LoadedTpLayer) => Promise<TpLayerStep[]>;
    check?: (loaded: LoadedTpLayer) => void;
  } = {},
): Promise<number> {
  const { edit, check } = options;
  const layer = tpLayer(config, { variant: options.variant ?? 'fused' });
  const group = await openDeviceGroup({ devices, timeoutMs: COLD_COMPILE_MS });
  try {
    const loaded = await layer.load(group);
    check?.(loaded);
    const inputs = tpLayerInputs(config, 7);
    const tensors = await loaded.tensors(inputs);
    let out;
    if (edit) {
      const steps = await edit(loaded.steps(tensors), loaded);
      for (const step of steps) await loaded.program(step.kernel).run(step.tensors);
      out = await steps.at(-1)!.tensors.Out!.read();
    } else {
      out = await (await loaded.run(tensors)).read();
    }
    const expected = tpLayerReference(config, inputs);
    const rows = layer.shape.shard * layer.shape.hidden;
    let worst = 0;
    let scale = 0;
    expected.forEach((ref, rank) =>
      ref.forEach((x, i) => {
        scale = Math.max(scale, Math.abs(x));
        worst = Math.max(worst, Math.abs(x - out[rank]![rank * rows + i]!));
      }),
    );
    return worst / scale;
  } finally {
    group.close();
  }
}

describe('a tensor-parallel layer, end to end, against the CPU reference', () => {
  const cases: [number, number, 'f32' | 'f16'][] = [
    [2, 1, 'f32'],
    [4, 1, 'f32'],
    [2, 2, 'f32'],
    [4, 2, 'f32'],
    [2, 1, 'f16'],
    [4, 2, 'f16'],
  ];
  it.each(cases)('%i ranks over %i device(s), %s', async (ranks, devices, dtype) => {
    const error = await layerError({ ...SHAPE, ranks, dtype }, devices);
    expect(error).toBeLessThan(TOLERANCE[dtype]);
  }, COLD_COMPILE_MS);

  it('heads wider than the KV block: output in pieces, Q·Kᵀ over slices of the head', async () => {
    // headDim 64: KV blocks of 32 rows, so each head's output is two [16, 32] pieces and Q·Kᵀ sums two 32-wide slices.
    const config: TpLayerConfig = { seq: 64, hidden: 128, heads: 2, headDim: 64, ffn: 64, ranks: 2, dtype: 'f32' };
    expect(tpLayer(config).shape).toMatchObject({ kvBlock: 32, sliceD: 32, queryBlock: 16 });
    expect(await layerError(config, 1)).toBeLessThan(TOLERANCE.f32);
  }, COLD_COMPILE_MS);

  it.each([
    // More query rows than KV rows, and the reverse: the mask's columns either side of the diagonal.
    [{ queryBlock: 32, kvBlock: 16, sliceD: 16 }],
    [{ queryBlock: 8, kvBlock: 32, sliceD: 16 }],
  ])('attention tile %o (query tiles last-first)', async (attention) => {
    const config: TpLayerConfig = { seq: 64, hidden: 128, heads: 2, headDim: 64, ffn: 64, ranks: 2, dtype: 'f32', attention };
    expect(tpLayer(config).shape).toMatchObject(attention);
    expect(await layerError(config, 1)).toBeLessThan(TOLERANCE.f32);
  }, COLD_COMPILE_MS);

  it('catches attention run without its causal mask', async () => {
    const error = await layerError({ ...SHAPE, ranks: 2, dtype: 'f32' }, 1, {
      edit: async (steps, loaded) => {
        const zeros = await loaded.group.tensor(loaded.program('attention').spec('MASK'), { fill: 0 });
        return steps.map((s) => (s.kernel === 'attention' ? { ...s, tensors: { ...s.tensors, MASK: zeros } } : s));
      },
    });
    expect(error).toBeGreaterThan(1000 * TOLERANCE.f32);
  }, COLD_COMPILE_MS);
});

describe('the sequential layer (each collective whole, apart from its GEMM): the baseline for benchmarks', () => {
  it.each([1, 2])('2 ranks over %i device(s), f32', async (devices) => {
    const error = await layerError({ ...SHAPE, ranks: 2, dtype: 'f32' }, devices, {
      variant: 'sequential',
      check: (loaded) => {
        // Every GEMM's chunks move between dispatches, the collective apart from the tiles.
        for (const kernel of ['qkv', 'outProj', 'gateUp', 'down'] as const) {
          const { placed } = loaded.program(kernel);
          expect(placed.phases?.phasing).toBe('sequential');
          expect(loaded.program(kernel).compiled.module.chunks.every((c) => c.backend === 'peer-copy')).toBe(true);
        }
      },
    });
    expect(error).toBeLessThan(TOLERANCE.f32);
  }, COLD_COMPILE_MS);
});

describe('what the layer refuses', () => {
  const good: TpLayerConfig = { ...SHAPE, ranks: 2, dtype: 'f32' };
  it.each([
    [{ seq: 18, ranks: 4 }, /seq \(S = 18\) must be divisible by ranks \(R = 4\)/],
    [{ heads: 2, headDim: 16, ranks: 4 }, /heads \(2\) must be divisible by ranks \(R = 4\)/],
    [{ hidden: 48 }, /hidden \(H = 48\) must equal heads · headDim \(4 · 8 = 32\)/],
    [{ ffn: 66, ranks: 4 }, /ffn \(F = 66\) must be divisible by ranks \(R = 4\)/],
    [{ dtype: 'bf16' }, /dtype must be f32 or f16, got bf16/],
    [{ ranks: 0 }, /ranks \(R\) must be a positive integer, got 0/],
    [{ headDim: 256, hidden: 1024 }, /headDim 256 makes the attention kernel stage \d+ bytes of workgroup memory/],
    [{ reduction: 'tree' }, /reduction must be 'ring' or 'one-shot', got tree/],
    [{ attention: { queryBlock: 12, kvBlock: 8, sliceD: 8 } }, /attention.queryBlock must be a power of two, got 12/],
    [{ attention: { queryBlock: 32, kvBlock: 8, sliceD: 8 } }, /attention.queryBlock \(32\) must divide seq \(S = 16\)/],
    [{ attention: { queryBlock: 16, kvBlock: 16, sliceD: 8 } }, /attention.kvBlock \(16\) must divide headDim \(8\)/],
  ] as [Partial<Record<keyof TpLayerConfig, unknown>>, RegExp][])('%o', (change, message) => {
    const make = () => tpLayer({ ...good, ...change } as TpLayerConfig);
    expect(make).toThrow(UsageError);
    expect(make).toThrow(message);
  });

  it('inputs of the wrong size or missing, naming the input and the rank', async () => {
    const group = await openDeviceGroup({ timeoutMs: COLD_COMPILE_MS });
    try {
      const loaded = await tpLayer(good).load(group);
      const inputs = tpLayerInputs(good);
      const short = { ...inputs, wo: [inputs.wo[0]!, inputs.wo[1]!.subarray(1)] };
      const error = await loaded.tensors(short).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TensorInputError);
      expect((error as TensorInputError).message).toBe('tensor wo, rank 1: expected 512 elements (its whole copy, [16, 32]), found 511 elements');
      const { gamma2: _, ...missing } = inputs;
      await expect(loaded.tensors(missing as typeof inputs)).rejects.toThrow('tp-layer: input gamma2 is missing');
      await expect(loaded.tensors({ ...inputs, bias: inputs.x } as typeof inputs)).rejects.toThrow('tp-layer: unknown input bias');
    } finally {
      group.close();
    }
  }, COLD_COMPILE_MS);
});
