/**
 * The tensor-parallel transformer layer (packages/core/src/layers) on GPUs: the fused layer (each
 * all-gather and reduce-scatter inside its GEMM's kernel) against the sequential one (each collective
 * moved whole between dispatches), on the same devices, the same input tensors, in the same rounds.
 * Both are checked first at the timed shape: the fused layer's output against the sequential one's
 * (and, with --reference, both against the CPU reference: only at small shapes). Then `--rounds`
 * rounds, each running both layers once in alternating order, timed on the host's clock around the
 * layer's ten steps; then each step alone, once a round, for where the time goes.
 *
 * The GEMMs take subgroup matrices (tensor cores) where the devices have them (`--target auto`), or
 * SIMT (`--target simt`). `--attention QxKxD` sets the attention tile (query rows, KV rows, Q·Kᵀ's
 * slice); `--attention-tiles A,B,..` first times the attention kernel alone at each tile given (one
 * JSON line each, with the layer's tile among them for scale), at the layer's shape.
 *
 * Last, each GEMM step's collective alone (the sequential program run with its tiles' phases left
 * out), for the layer's perfect-overlap bound: every step that is not a GEMM as the fused layer ran
 * it, and each GEMM step as the longer of its compute (the sequential step less its collective) and
 * its collective. An optimistic bound: over two devices a device's own copies to and from the host
 * cannot overlap its dispatches (DESIGN.md).
 *
 *   node dist/tp-layer.mjs [--ranks 8] [--devices 1] [--dtype f16] [--seq 4096 --hidden 4096 --heads 32
 *                          --head-dim 128 --ffn 11008] [--rounds 10] [--reference] [--target auto|simt]
 *                          [--attention 64x16x16] [--attention-tiles 16x32x32,64x16x16] [--out FILE.jsonl]
 *
 * Prints one JSON line (and appends it to --out).
 */
import { appendFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  adapterLabel,
  causalAttentionKernel,
  causalMask,
  compileOrThrow,
  openDeviceGroup,
  summarize,
  tpLayer,
  tpLayerInputs,
  tpLayerReference,
  tpLayerShape,
  type AttentionTile,
  type TpLayerGemmName,
  type DeviceGroup,
  type LoadedTpLayer,
  type TpLayerConfig,
  type TpLayerTensors,
} from '@syncopate/core';

const { values: v } = parseArgs({
  options: {
    ranks: { type: 'string', default: '8' },
    devices: { type: 'string', default: '1' },
    dtype: { type: 'string', default: 'f16' },
    seq: { type: 'string', default: '4096' },
    hidden: { type: 'string', default: '4096' },
    heads: { type: 'string', default: '32' },
    'head-dim': { type: 'string', default: '128' },
    ffn: { type: 'string', default: '11008' },
    rounds: { type: 'string', default: '10' },
    reference: { type: 'boolean', default: false },
    target: { type: 'string', default: 'auto' },
    attention: { type: 'string' },
    'attention-tiles': { type: 'string' },
    out: { type: 'string' },
  },
});

/** `64x16x16` as a tile: query rows, KV rows, slice of headDim. */
function parseTile(text: string): AttentionTile {
  const [queryBlock, kvBlock, sliceD] = text.split('x').map(Number);
  return { queryBlock: queryBlock!, kvBlock: kvBlock!, sliceD: sliceD! };
}

const config: TpLayerConfig = {
  seq: Number(v.seq),
  hidden: Number(v.hidden),
  heads: Number(v.heads),
  headDim: Number(v['head-dim']),
  ffn: Number(v.ffn),
  ranks: Number(v.ranks),
  dtype: v.dtype as 'f32' | 'f16',
  ...(v.attention && { attention: parseTile(v.attention) }),
};
const target = v.target as 'auto' | 'simt';

function emit(record: object): void {
  const line = JSON.stringify(record);
  console.log(line);
  if (v.out) appendFileSync(v.out, `${line}\n`);
}

/** The attention kernel alone at each tile, over a QKV of small values: median of 5 runs after 2. */
async function attentionSweep(group: DeviceGroup, tiles: readonly string[]): Promise<void> {
  for (const text of tiles) {
    try {
      const s = tpLayerShape({ ...config, attention: parseTile(text) });
      const kernel = causalAttentionKernel({ seq: s.seq, localHeads: s.localHeads, headDim: s.headDim, ranks: s.ranks, queryBlock: s.queryBlock, kvBlock: s.kvBlock, sliceD: s.sliceD, dtype: s.dtype });
      const program = await group.load(compileOrThrow(kernel, { name: 'local', ranks: s.ranks, chunks: [] }));
      const tensors = {
        QKV: await group.tensor(program.spec('QKV'), { fill: 0.01 }),
        MASK: await group.tensor(program.spec('MASK'), Array.from({ length: s.ranks }, () => causalMask(s))),
        O: await group.tensor(program.spec('O'), { fill: 0 }),
      };
      for (let i = 0; i < 2; i++) await program.run(tensors);
      const times: number[] = [];
      for (let i = 0; i < 5; i++) times.push(await timed(() => program.run(tensors)));
      emit({ bench: 'tp-layer-attention', config, tile: text, ms: summarize(times) });
      Object.values(tensors).forEach((t) => t.destroy());
      program.destroy();
    } catch (e) {
      emit({ bench: 'tp-layer-attention', config, tile: text, error: String((e as Error).message ?? e).slice(0, 400) });
    }
  }
}

/** The largest |a − b| over ranks' own rows (both given as each rank's [S/R, H] rows), and the largest |b|. */
function compare(a: readonly Float32Array[], b: readonly ArrayLike<number>[]): { maxAbs: number; scale: number } {
  let maxAbs = 0;
  let scale = 0;
  a.forEach((x, rank) => {
    const want = b[rank]!;
    for (let i = 0; i < x.length; i++) {
      maxAbs = Math.max(maxAbs, Math.abs(x[i]! - want[i]!));
      scale = Math.max(scale, Math.abs(want[i]!));
    }
  });
  return { maxAbs, scale };
}

/** Each rank's own rows of the layer's output. */
async function ownRows(layer: LoadedTpLayer, t: TpLayerTensors): Promise<Float32Array[]> {
  const out = await (await layer.run(t)).read();
  const { shard, hidden } = layer.shape;
  return out.map((copy, rank) => copy.slice(rank * shard * hidden, (rank + 1) * shard * hidden));
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await run();
  return performance.now() - start;
}

/** Each GEMM's step in `LoadedTpLayer.steps`. */
const GEMM_STEPS: Record<TpLayerGemmName, string> = { qkv: 'all-gather+qkv', outProj: 'out-proj+reduce-scatter', gateUp: 'all-gather+gate-up', down: 'down+reduce-scatter' };

/** Each GEMM step's collective alone in the sequential layer: median ms of 5 runs after 2. */
async function collectivesAlone(layer: LoadedTpLayer, t: TpLayerTensors): Promise<Record<TpLayerGemmName, number>> {
  const out: Partial<Record<TpLayerGemmName, number>> = {};
  for (const [g, name] of Object.entries(GEMM_STEPS) as [TpLayerGemmName, string][]) {
    const step = layer.steps(t).find((s) => s.name === name)!;
    const run = () => layer.program(step.kernel).run(step.tensors, { communicationOnly: true });
    for (let i = 0; i < 2; i++) await run();
    const times: number[] = [];
    for (let i = 0; i < 5; i++) times.push(await timed(run));
    out[g] = summarize(times).median;
  }
  return out as Record<TpLayerGemmName, number>;
}

const group = await openDeviceGroup({ devices: Number(v.devices), timeoutMs: 120_000 });
try {
  if (v['attention-tiles']) await attentionSweep(group, v['attention-tiles'].split(','));
  const variants = { fused: tpLayer(config), sequential: tpLayer(config, { variant: 'sequential' }) };
  const loaded = { fused: await variants.fused.load(group, { target }), sequential: await variants.sequential.load(group, { target }) };
  const inputs = tpLayerInputs(config, 1);
  const t = await loaded.fused.tensors(inputs);

  // The check, at the timed shape: fused against sequential (and the CPU where asked).
  const fusedOut = await ownRows(loaded.fused, t);
  const sequentialOut = await ownRows(loaded.sequential, t);
  const agree = compare(fusedOut, sequentialOut);
  const reference = v.reference ? tpLayerReference(config, inputs) : undefined;
  const vsReference = reference && { fused: compare(fusedOut, reference), sequential: compare(sequentialOut, reference) };

  // Warm-up, then rounds: both layers each round, in alternating order.
  for (let i = 0; i < 2; i++) for (const layer of Object.values(loaded)) await layer.run(t);
  const times: Record<'fused' | 'sequential', number[]> = { fused: [], sequential: [] };
  const steps: Record<'fused' | 'sequential', Record<string, number[]>> = { fused: {}, sequential: {} };
  for (let round = 0; round < Number(v.rounds); round++) {
    const order = round % 2 === 0 ? (['fused', 'sequential'] as const) : (['sequential', 'fused'] as const);
    for (const name of order) times[name].push(await timed(() => loaded[name].run(t)));
    for (const name of order) {
      for (const step of loaded[name].steps(t)) (steps[name][step.name] ??= []).push(await timed(() => loaded[name].program(step.kernel).run(step.tensors)));
    }
  }
  const median = (xs: number[]) => summarize(xs).median;
  const stepsMedianMs = Object.fromEntries(Object.entries(steps).map(([name, s]) => [name, Object.fromEntries(Object.entries(s).map(([k, xs]) => [k, median(xs)]))])) as Record<'fused' | 'sequential', Record<string, number>>;
  const collectiveMs = await collectivesAlone(loaded.sequential, t);
  const gemmStep = Object.fromEntries(Object.entries(GEMM_STEPS).map(([g, step]) => [step, g as TpLayerGemmName]));
  const boundMs = Object.entries(stepsMedianMs.fused).reduce((sum, [step, ms]) => {
    const g = gemmStep[step];
    return sum + (g ? Math.max(collectiveMs[g], stepsMedianMs.sequential[step]! - collectiveMs[g]) : ms);
  }, 0);
  const record = {
    bench: 'tp-layer',
    config,
    devices: group.devices.length,
    adapter: adapterLabel(group.devices[0]!, group.devices.length),
    rounds: Number(v.rounds),
    gemmTarget: { fused: loaded.fused.gemmTarget, sequential: loaded.sequential.gemmTarget },
    attentionTile: { queryBlock: loaded.fused.shape.queryBlock, kvBlock: loaded.fused.shape.kvBlock, sliceD: loaded.fused.shape.sliceD },
    timing: 'wall-clock',
    check: { fusedVsSequential: agree, ...(vsReference && { vsReference }) },
    ms: { fused: summarize(times.fused), sequential: summarize(times.sequential) },
    fusedOverSequential: median(times.sequential) / median(times.fused),
    stepsMedianMs,
    collectiveAloneMs: collectiveMs,
    overlapBoundMs: boundMs,
    fusedOverBound: median(times.fused) / boundMs,
  };
  emit(record);
} finally {
  group.close();
}
