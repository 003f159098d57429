/**
 * The command lines of `syncopate run|bench|tune tp-layer`: the layer's shape and plan options, read
 * into the runner's options. The layer is a program of ten kernels, not one workload kernel, so it
 * takes its own shape options (--seq, --hidden, --heads, --head-dim, --ffn) in place of --m/--n/--k.
 */
import { COLLECTIVE_PLANS, UsageError } from '../../workloads/index.js';
import type { AttentionTile, TpLayerConfig } from '../../layers/config.js';
import type { TpLayerVariant } from '../../layers/tp-layer.js';
import { TP_LAYER_CHECKS, type TpLayerCheck, type TpLayerRunOptions } from '../tp-layer-runner.js';
import { DEFAULT_SEED, DTYPES, integer, oneOf, optional, type OptionName, type Values } from './args.js';

export const LAYER_NAME = 'tp-layer';
export type LayerAction = 'run' | 'bench' | 'tune';

/** A layer that runs in seconds on a 2-core CPU software adapter. */
export const TP_LAYER_DEFAULTS = { seq: 64, hidden: 64, heads: 4, headDim: 16, ffn: 128, ranks: 2 } as const;
const VARIANTS: readonly TpLayerVariant[] = ['fused', 'sequential'];
const TARGETS = ['auto', 'simt', 'subgroup-matrix', 'simt-attention'] as const;

export interface LayerCommand {
  readonly kind: 'layer';
  readonly action: LayerAction;
  readonly options: TpLayerRunOptions;
  /** tune: the chunk counts to try. */
  readonly chunkCandidates?: readonly number[];
  readonly json: boolean;
}

const SHAPE: readonly OptionName[] = ['help', 'ranks', 'devices', 'dtype', 'seq', 'hidden', 'heads', 'head-dim', 'ffn', 'attention', 'chunks-per-rank', 'gather', 'reduction', 'target', 'seed', 'json', 'runs', 'warmup'];
export const LAYER_OPTIONS: Record<LayerAction, readonly OptionName[]> = {
  run: [...SHAPE, 'variant', 'check'],
  bench: [...SHAPE, 'check'],
  tune: SHAPE,
};

function chunkList(text: string | undefined): number[] | undefined {
  if (text === undefined) return undefined;
  return [...new Set(text.split(',').map((item) => integer('chunks-per-rank', item.trim(), 1)!))];
}

/** `--attention 64x32x16`: query rows, KV rows, Q·Kᵀ's slice of the head (tpLayerShape checks what they must divide). */
function attentionTile(text: string | undefined): AttentionTile | undefined {
  if (text === undefined) return undefined;
  const parts = text.split('x');
  if (parts.length !== 3) throw new UsageError(`--attention takes QUERYxKVxSLICE (e.g. 64x32x16), got '${text}'`);
  const [queryBlock, kvBlock, sliceD] = parts.map((p) => integer('attention', p, 1)!) as [number, number, number];
  return { queryBlock, kvBlock, sliceD };
}

export function layerCommand(action: LayerAction, v: Values): LayerCommand {
  for (const option of Object.keys(v) as OptionName[]) {
    if (!LAYER_OPTIONS[action].includes(option)) throw new UsageError(`option --${option} does not apply to ${action} ${LAYER_NAME}`);
  }
  // tune takes a list of chunk counts (its candidates); run and bench one.
  const chunks = chunkList(v['chunks-per-rank']);
  if (action !== 'tune' && chunks !== undefined && chunks.length > 1) throw new UsageError(`--chunks-per-rank takes one count for ${action} ${LAYER_NAME}; tune takes a list`);
  const gather = v.gather === undefined ? undefined : oneOf('gather', v.gather, COLLECTIVE_PLANS, 'ring');
  const reduction = v.reduction === undefined ? undefined : oneOf('reduction', v.reduction, COLLECTIVE_PLANS, 'one-shot');
  const config: TpLayerConfig = {
    seq: integer('seq', v.seq, 1) ?? TP_LAYER_DEFAULTS.seq,
    hidden: integer('hidden', v.hidden, 1) ?? TP_LAYER_DEFAULTS.hidden,
    heads: integer('heads', v.heads, 1) ?? TP_LAYER_DEFAULTS.heads,
    headDim: integer('head-dim', v['head-dim'], 1) ?? TP_LAYER_DEFAULTS.headDim,
    ffn: integer('ffn', v.ffn, 1) ?? TP_LAYER_DEFAULTS.ffn,
    ranks: integer('ranks', v.ranks, 1) ?? TP_LAYER_DEFAULTS.ranks,
    dtype: oneOf('dtype', v.dtype, DTYPES, 'f32'),
    ...optional('gather', gather),
    ...optional('reduction', reduction),
    ...(action !== 'tune' && chunks !== undefined && { chunksPerRank: chunks[0]! }),
    ...optional('attention', attentionTile(v.attention)),
  };
  const devices = integer('devices', v.devices, 1, 64);
  if (devices !== undefined && devices > config.ranks) throw new UsageError(`--devices ${devices} is more than the ${config.ranks} ranks: a device would hold no rank`);
  const options: TpLayerRunOptions = {
    config,
    ...optional('devices', devices),
    ...optional('variant', v.variant === undefined ? undefined : oneOf('variant', v.variant, VARIANTS, 'fused')),
    ...optional('target', v.target === undefined ? undefined : oneOf('target', v.target, TARGETS, 'auto')),
    ...optional('check', v.check === undefined ? undefined : oneOf<TpLayerCheck>('check', v.check, TP_LAYER_CHECKS, 'auto')),
    seed: integer('seed', v.seed, 0, 0xffffffff) ?? DEFAULT_SEED,
    ...optional('runs', integer('runs', v.runs, 1)),
    ...optional('warmup', integer('warmup', v.warmup, 0)),
  };
  return { kind: 'layer', action, options, ...(action === 'tune' && chunks !== undefined && { chunkCandidates: chunks }), json: v.json ?? false };
}
