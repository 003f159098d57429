/**
 * The tensor-parallel transformer layer (packages/core/src/layers) on GPUs: the fused layer (each
 * all-gather and reduce-scatter inside its GEMM's kernel) against the sequential one (each collective
 * moved whole between dispatches), on the same devices, the same input tensors, in the same rounds.
 * Both are checked first at the timed shape: the fused layer's output against the sequential one's
 * (and, with --reference, both against the CPU reference: only at small shapes). Then `--rounds`
 * rounds, each running both layers once in alternating order, timed on the host's clock around the
 * layer's ten steps; then each step alone, once a round, for where the time goes.
 *
 *   node dist/tp-layer.mjs [--ranks 8] [--devices 1] [--dtype f16] [--seq 4096 --hidden 4096 --heads 32
 *                          --head-dim 128 --ffn 11008] [--rounds 10] [--reference] [--out FILE.jsonl]
 *
 * Prints one JSON line (and appends it to --out).
 */
import { appendFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { adapterLabel, openDeviceGroup, summarize, tpLayer, tpLayerInputs, tpLayerReference, type LoadedTpLayer, type TpLayerConfig, type TpLayerTensors } from '@syncopate/core';

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
    out: { type: 'string' },
  },
});

const config: TpLayerConfig = {
  seq: Number(v.seq),
  hidden: Number(v.hidden),
  heads: Number(v.heads),
  headDim: Number(v['head-dim']),
  ffn: Number(v.ffn),
  ranks: Number(v.ranks),
  dtype: v.dtype as 'f32' | 'f16',
};

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

const group = await openDeviceGroup({ devices: Number(v.devices), timeoutMs: 120_000 });
try {
  const variants = { fused: tpLayer(config), sequential: tpLayer(config, { variant: 'sequential' }) };
  const loaded = { fused: await variants.fused.load(group), sequential: await variants.sequential.load(group) };
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
  const record = {
    bench: 'tp-layer',
    config,
    devices: group.devices.length,
    adapter: adapterLabel(group.devices[0]!, group.devices.length),
    rounds: Number(v.rounds),
    timing: 'wall-clock',
    check: { fusedVsSequential: agree, ...(vsReference && { vsReference }) },
    ms: { fused: summarize(times.fused), sequential: summarize(times.sequential) },
    fusedOverSequential: median(times.sequential) / median(times.fused),
    stepsMedianMs: Object.fromEntries(Object.entries(steps).map(([name, s]) => [name, Object.fromEntries(Object.entries(s).map(([k, xs]) => [k, median(xs)]))])),
  };
  const line = JSON.stringify(record);
  console.log(line);
  if (v.out) appendFileSync(v.out, `${line}\n`);
} finally {
  group.close();
}
