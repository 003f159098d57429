/**
 * The tensor-parallel transformer layer (packages/core/src/layers) on GPUs: the fused layer (each
 * all-gather and reduce-scatter inside its GEMM's kernel) against the sequential one (each collective
 * moved whole between dispatches), on the same devices, the same input tensors, in the same rounds.
 * Both are checked first at the timed shape: the fused layer's output against the sequential one's
 * (and, with --reference, both against the CPU reference: only at small shapes). Then `--rounds`
 * rounds, each running both layers once in alternating order, timed on the host's clock around the
 * layer's ten steps; then each step alone, once a round, for where the time goes.
 *
 * The GEMMs and attention's products take subgroup matrices (tensor cores) where the devices have
 * them (`--target auto`), or SIMT (`--target simt`; `--target simt-attention`: the GEMMs as under
 * auto, attention SIMT). `--attention QxKxD` sets the attention tile (query rows, KV rows, Q·Kᵀ's
 * slice); `--attention-tiles A,B,..` first times attention alone at each tile given (one JSON line
 * each, with the layer's tile among them for scale), at the layer's shape: on subgroup matrices
 * (QKV rounded to f16, then attention: both timed) where the target takes them there, else SIMT;
 * with `--rounds 0`, nothing else.
 *
 * Last, each GEMM step's collective alone (the sequential program run with its tiles' phases left
 * out), for the layer's perfect-overlap bound: every step that is not a GEMM as the fused layer ran
 * it, and each GEMM step as the longer of its compute (the sequential step less its collective) and
 * its collective. An optimistic bound: over two devices a device's own copies to and from the host
 * cannot overlap its dispatches (DESIGN.md).
 *
 *   node dist/tp-layer.mjs [--ranks 8] [--devices 1] [--dtype f16] [--seq 4096 --hidden 4096 --heads 32
 *                          --head-dim 128 --ffn 11008] [--rounds 10] [--reference] [--target auto|simt|simt-attention]
 *                          [--attention 64x16x16] [--attention-tiles 16x32x32,64x16x16] [--out FILE.jsonl]
 *
 * Prints one JSON line (and appends it to --out): `benchTpLayer`'s report (what `syncopate bench
 * tp-layer --json` prints) with the bench's name and the attention tile.
 *
 * Under mpirun (one process a GPU): every process joins the job and runs its block of the devices
 * (`--devices` counts every process's, one a process by default); the check is over every rank and
 * each time a run's slowest process; process 0 alone prints and writes --out. `--attention-tiles`
 * runs in one process only.
 *
 *   mpirun --bind-to none -n 2 node dist/tp-layer.mjs --ranks 2 --devices 2 --dtype f16 --rounds 10
 */
import { appendFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  benchTpLayer,
  causalAttentionKernel,
  causalMask,
  compileOrThrow,
  gemmTargetFor,
  joinProcessGroup,
  launchedByMpi,
  matrixAttentionKernels,
  openDeviceGroup,
  summarize,
  timed,
  tpLayerShape,
  type AttentionTile,
  type DeviceGroup,
  type Program,
  type Tensor,
  type TpLayerConfig,
  type TpLayerGemmTarget,
} from '@syncopate/core';

const { values: v } = parseArgs({
  options: {
    ranks: { type: 'string', default: '8' },
    devices: { type: 'string' },
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
const timeoutMs = 120_000;
// Under mpirun, this process's part of the job (undefined in one process, or a job of one).
const joined = launchedByMpi() ? await joinProcessGroup() : undefined;
const processes = joined && joined.size > 1 ? joined : undefined;
const lead = !processes || processes.rank === 0;
// Every device of the job: one in one process, one a process under mpirun, unless given.
const devices = v.devices === undefined ? (processes?.size ?? 1) : Number(v.devices);

function emit(record: object): void {
  if (!lead) return;
  const line = JSON.stringify(record);
  console.log(line);
  if (v.out) appendFileSync(v.out, `${line}\n`);
}

/**
 * Attention alone at each tile, over a QKV of small values: median of 5 runs after 2. On subgroup
 * matrices (where `--target` and the devices take them and the tile fits) also the f16 rounding of
 * QKV before it, timed apart.
 */
async function attentionSweep(group: DeviceGroup, tiles: readonly string[]): Promise<void> {
  const requested = v.target as TpLayerGemmTarget;
  const target = config.dtype === 'f16' && requested !== 'simt-attention' ? gemmTargetFor(requested, group.devices, 'f16') : undefined;
  const median5 = async (program: Program, tensors: Record<string, Tensor>) => {
    for (let i = 0; i < 2; i++) await program.run(tensors);
    const times: number[] = [];
    for (let i = 0; i < 5; i++) times.push(await timed(() => program.run(tensors)));
    return summarize(times);
  };
  for (const text of tiles) {
    const made: { destroy(): void }[] = [];
    try {
      const s = tpLayerShape({ ...config, attention: parseTile(text) });
      const matrices = target && matrixAttentionKernels(s);
      const local = (kernel: Parameters<typeof compileOrThrow>[0]) => compileOrThrow(kernel, { name: 'local', ranks: s.ranks, chunks: [] });
      const program = matrices
        ? await group.load(matrices.attention, { codegen: { target } })
        : await group.load(local(causalAttentionKernel({ seq: s.seq, localHeads: s.localHeads, headDim: s.headDim, ranks: s.ranks, queryBlock: s.queryBlock, kvBlock: s.kvBlock, sliceD: s.sliceD, dtype: s.dtype })));
      made.push(program);
      const tensor = async (...args: Parameters<DeviceGroup['tensor']>) => {
        const t = await group.tensor(...args);
        made.push(t);
        return t;
      };
      const tensors = {
        QKV: await tensor(program.spec('QKV'), { fill: 0.01 }),
        MASK: await tensor(program.spec('MASK'), Array.from({ length: s.ranks }, () => causalMask(matrices ? s.matrixAttention! : s))),
        O: await tensor(program.spec('O'), { fill: 0 }),
      };
      const ms = await median5(program, tensors);
      let toHalf;
      if (matrices) {
        const cast = await group.load(matrices.qkvHalf);
        made.push(cast);
        toHalf = await median5(cast, { QKV: await tensor(cast.spec('QKV'), { fill: 0.01 }), QKVH: tensors.QKV });
      }
      emit({ bench: 'tp-layer-attention', config, tile: text, path: matrices ? 'subgroup-matrix' : 'simt', ms, ...(toHalf && { qkvToF16Ms: toHalf }) });
    } catch (e) {
      emit({ bench: 'tp-layer-attention', config, tile: text, error: String((e as Error).message ?? e).slice(0, 400) });
    } finally {
      made.forEach((x) => x.destroy());
    }
  }
}

async function main(): Promise<void> {
  if (v['attention-tiles']) {
    if (processes) throw new Error('--attention-tiles runs in one process: run it without mpirun');
    const group = await openDeviceGroup({ devices, timeoutMs });
    try {
      await attentionSweep(group, v['attention-tiles'].split(','));
    } finally {
      group.close();
    }
  }
  // --rounds 0: the sweep alone.
  if (Number(v.rounds) === 0) return;
  const report = await benchTpLayer({ config, devices, target: v.target as TpLayerGemmTarget, runs: Number(v.rounds), warmup: 2, check: v.reference ? 'reference' : 'sequential', timeoutMs, ...(processes && { processes }) });
  const s = tpLayerShape(config);
  // Attention ran on subgroup matrices where the report's steps include qkv-to-f16 (at matrixAttentionTile).
  emit({ bench: 'tp-layer', ...report, attentionTile: { queryBlock: s.queryBlock, kvBlock: s.kvBlock, sliceD: s.sliceD }, matrixAttentionTile: s.matrixAttention ?? null, timing: 'wall-clock' });
}

try {
  await main();
  await joined?.close();
} catch (e) {
  const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  // A failure this process met alone would leave the others waiting on it: end the job.
  if (processes) processes.abort(1, `[process ${processes.rank} on ${processes.host}] ${message}`);
  else console.error(message);
  process.exitCode = 1;
}
