/**
 * A tensor-parallel transformer layer (Megatron's sequence-parallel form, the one PyTorch's async-TP
 * fuses), built from compiled kernels and run through the run API as a user would:
 *
 *   1. RMSNorm of X [S, H] (rank r owns rows r·S/R ..)       rank-local kernel
 *   2. all-gather + QKV GEMM (each rank its H/R/d heads)      fused AllGather + GEMM
 *   3. causal attention over the rank's heads                rank-local kernel
 *      (on subgroup matrices: QKV first rounded to f16,        rank-local kernel)
 *   4. output projection GEMM + reduce-scatter               fused GEMM + ReduceScatter
 *   5. residual X1 = X + Y                                   rank-local kernel
 *   6. RMSNorm of X1                                         (the kernel of step 1)
 *   7. all-gather + gate/up GEMM (each rank F/R of each)     fused AllGather + GEMM
 *   8. SiLU(gate)·up                                         rank-local kernel
 *   9. down GEMM + reduce-scatter                            fused GEMM + ReduceScatter
 *  10. residual Out = X1 + Y2                                (the kernel of step 5)
 *
 * Tensors stay on the devices from step to step: each step's output Tensor is the next one's input.
 * Every tensor is [rows, columns] with every rank's whole copy (as the run API lays tensors out);
 * a rank's copy of X, X1 and Out is meaningful in its own rows only.
 */
import { gemmKernel, replicated, sharded, type ChunkPlan, type CommBackend, type Module } from '@syncopate/ir';
import { oneShotAllGather, oneShotReduceScatter, ringAllGather, ringReduceScatter } from '@syncopate/passes';
import type { CodegenOptions, SubgroupMatrixTarget } from '@syncopate/backends';
import { compileOrThrow, type CompiledKernel } from '../api/compile.js';
import type { DeviceGroup, Program, Tensor, TensorSpec, RankArrays } from '../api/index.js';
import { CompileError } from '../api/compile-error.js';
import { simtGemmBlock, UsageError, wideTensorCoreBlock } from '../workloads/index.js';
import { gemmTargetFor, type TpLayerGemmTarget } from './gemm-target.js';
import { tpLayerShape, type TpLayerConfig, type TpLayerShape } from './config.js';
import { causalAttentionKernel, causalMask } from './causal-attention.js';
import { qkvHalfKernel } from './qkv-half.js';
import { residualKernel } from './residual.js';
import { rmsNormKernel } from './rms-norm.js';
import { swigluKernel } from './swiglu.js';

/**
 * How the collectives run. fused: each all-gather and reduce-scatter inside its GEMM's kernel, tiles
 * waiting only for the chunks they read. sequential: every chunk moves between dispatches and the
 * whole collective runs before (all-gather) or after (reduce-scatter) the GEMM's tiles, as
 * `bench`'s sequential variant does (peer-copy backend, sequential phasing).
 */
export type TpLayerVariant = 'fused' | 'sequential';

/** The layer's compiled kernels, one per distinct step (RMSNorm and the residual each serve two). */
export interface TpLayerKernels {
  readonly rmsNorm: CompiledKernel;
  readonly qkv: CompiledKernel;
  readonly attention: CompiledKernel;
  readonly outProj: CompiledKernel;
  readonly residual: CompiledKernel;
  readonly gateUp: CompiledKernel;
  readonly swiglu: CompiledKernel;
  readonly down: CompiledKernel;
  /** Where attention runs on subgroup matrices: QKV rounded to f16 for it (`attention` then reads f16). */
  readonly qkvHalf?: CompiledKernel;
}

export type TpLayerKernelName = keyof TpLayerKernels;

/** The four GEMMs, the kernels a tensor-core lowering replaces. */
export type TpLayerGemmName = 'qkv' | 'outProj' | 'gateUp' | 'down';
type GemmKernels = Pick<TpLayerKernels, TpLayerGemmName>;
const GEMM_NAMES: readonly TpLayerGemmName[] = ['qkv', 'outProj', 'gateUp', 'down'];

/** How the GEMMs are tiled: the workloads' SIMT tile, or their subgroup-matrix tile (`wideTensorCoreBlock`). */
type TpLayerGemmTiles = 'simt' | 'tensor-core';

/**
 * The layer's inputs, one array per rank, row-major. `x`: the rank's S/R rows of X (or its whole
 * [S, H] copy). `gamma1`, `gamma2`: RMSNorm weights [H]. `wqkv` [H, 3·H/R]: the rank's columns of
 * Wq, then of Wk, then of Wv (head h of the rank at h·d within each). `wo` [H/R, H]: the rank's rows
 * of Wo. `wgu` [H, 2·F/R]: the rank's columns of Wgate, then of Wup. `wd` [F/R, H]: its rows of Wdown.
 */
export interface TpLayerInputs {
  readonly x: RankArrays;
  readonly gamma1: RankArrays;
  readonly wqkv: RankArrays;
  readonly wo: RankArrays;
  readonly gamma2: RankArrays;
  readonly wgu: RankArrays;
  readonly wd: RankArrays;
}

export type TpLayerTensors = { readonly [K in keyof TpLayerInputs]: Tensor };

/** The tensors between the steps, made once when the layer is loaded and reused by every run. */
interface Activations {
  readonly xn: Tensor;
  readonly qkv: Tensor;
  /** QKV in f16, where attention runs on subgroup matrices. */
  readonly qkvHalf?: Tensor;
  readonly mask: Tensor;
  readonly o: Tensor;
  readonly y: Tensor;
  readonly x1: Tensor;
  readonly x1n: Tensor;
  readonly gu: Tensor;
  readonly a: Tensor;
  readonly y2: Tensor;
  readonly out: Tensor;
}

/** One step of a run: the program it runs and its tensors by the kernel's names. */
export interface TpLayerStep {
  readonly name: string;
  readonly kernel: TpLayerKernelName;
  readonly tensors: Readonly<Record<string, Tensor>>;
}

export interface TpLayer {
  readonly config: TpLayerConfig;
  readonly shape: TpLayerShape;
  readonly variant: TpLayerVariant;
  /** The kernels with SIMT GEMM tiles; a load on tensor cores compiles the GEMMs again with theirs. */
  readonly kernels: TpLayerKernels;
  /** The layer's programs loaded on `group`, its activations allocated there: ready to run. */
  load(group: DeviceGroup, options?: TpLayerLoadOptions): Promise<LoadedTpLayer>;
}

export interface TpLayerLoadOptions {
  /** How every kernel is lowered; the sequential variant sets `phasing: 'sequential'` on top. */
  readonly codegen?: CodegenOptions;
  /**
   * How the four GEMMs and attention are lowered (default auto: subgroup matrices with their tiles
   * where every device has them, `gemmTargetFor`). Attention takes them in f16 at the shape's
   * `matrixAttention` tile (its products on matrices, the softmax SIMT), else stays SIMT. Under auto
   * an attention the path cannot lower stays SIMT, and a GEMM it cannot lower leaves all four SIMT.
   */
  readonly target?: TpLayerGemmTarget;
}

/** The spec of each input, named as `TpLayerInputs` names it (for `group.tensor`'s checks and messages). */
export function tpLayerInputSpecs(s: TpLayerShape): { readonly [K in keyof TpLayerInputs]: TensorSpec } {
  const { seq: S, hidden: H, localHidden: Hr, localFfn: Fr, ranks, dtype } = s;
  const spec = (name: string, shape: [number, number], distribution = replicated()): TensorSpec => ({ name, shape, dtype, distribution, ranks });
  return {
    x: spec('x', [S, H], sharded(0)),
    gamma1: spec('gamma1', [1, H]),
    wqkv: spec('wqkv', [H, 3 * Hr]),
    wo: spec('wo', [Hr, H]),
    gamma2: spec('gamma2', [1, H]),
    wgu: spec('wgu', [H, 2 * Fr]),
    wd: spec('wd', [Fr, H]),
  };
}

/** A GEMM's plan: the collective on `tensor` [rows, cols] over rows, its chunks forced onto `backend` where given. */
function collectivePlan(s: TpLayerShape, kind: 'gather' | 'reduce', tensor: string, cols: number, backend: CommBackend | undefined): ChunkPlan {
  const template = kind === 'gather' ? (s.gather === 'ring' ? ringAllGather : oneShotAllGather) : s.reduction === 'ring' ? ringReduceScatter : oneShotReduceScatter;
  return template({ ranks: s.ranks, tensor: { name: tensor, shape: [s.seq, cols] }, axis: 0, chunksPerRank: s.chunksPerRank, ...(backend && { backend }) });
}

/** Each GEMM: its kernel's name, C [m, n] = A [m, k] · B [k, n], and the collective around it. */
function gemmShapes(s: TpLayerShape): Record<TpLayerGemmName, { name: string; m: number; n: number; k: number; distribute: 'ag' | 'rs' }> {
  const { seq: S, hidden: H, localHidden: Hr, localFfn: Fr } = s;
  return {
    qkv: { name: 'ag_qkv', m: S, n: 3 * Hr, k: H, distribute: 'ag' },
    outProj: { name: 'out_proj_rs', m: S, n: H, k: Hr, distribute: 'rs' },
    gateUp: { name: 'ag_gate_up', m: S, n: 2 * Fr, k: H, distribute: 'ag' },
    down: { name: 'down_rs', m: S, n: H, k: Fr, distribute: 'rs' },
  };
}

/** One of the layer's GEMMs as `gemmKernel` at the workloads' tile for its shape: SIMT's, or the subgroup-matrix one (f16 only: f32 has no tensor-core path). */
function gemmKernelOf(s: TpLayerShape, gemm: TpLayerGemmName, tiles: TpLayerGemmTiles): Module {
  const { name, m, n, k, distribute } = gemmShapes(s)[gemm];
  const block = tiles === 'tensor-core' ? wideTensorCoreBlock({ m, n, k }) : simtGemmBlock({ m, n, k }, s.dtype);
  return gemmKernel({ m, n, k, blockM: block.m, blockN: block.n, blockK: block.k, dtype: s.dtype }, { ranks: s.ranks, distribute, name });
}

/** The four GEMMs with their collectives, compiled at `tiles`. */
function compileGemms(s: TpLayerShape, variant: TpLayerVariant, tiles: TpLayerGemmTiles): GemmKernels {
  const { hidden: H } = s;
  const backend = variant === 'sequential' ? 'peer-copy' : undefined;
  const plans: Record<TpLayerGemmName, ChunkPlan> = {
    qkv: collectivePlan(s, 'gather', 'A', H, backend),
    outProj: collectivePlan(s, 'reduce', 'C', H, backend),
    gateUp: collectivePlan(s, 'gather', 'A', H, backend),
    down: collectivePlan(s, 'reduce', 'C', H, backend),
  };
  return Object.fromEntries(GEMM_NAMES.map((g) => [g, compileOrThrow(gemmKernelOf(s, g, tiles), plans[g])])) as unknown as GemmKernels;
}

const local = (s: TpLayerShape, kernel: Module) => compileOrThrow(kernel, { name: 'local', ranks: s.ranks, chunks: [] });

/**
 * Attention on subgroup matrices, at the shape's `matrixAttention` tile: f16 operands (P cast to f16
 * for P·V) from QKV rounded to f16 by `qkvHalf`. Undefined where the shape has no such tile.
 */
export function matrixAttentionKernels(s: TpLayerShape): Pick<Required<TpLayerKernels>, 'qkvHalf' | 'attention'> | undefined {
  const tile = s.matrixAttention;
  if (!tile) return undefined;
  const cols = 3 * s.localHidden;
  return {
    qkvHalf: local(s, qkvHalfKernel({ seq: s.seq, cols, ranks: s.ranks, rowBlock: 16, colBlock: Math.max(4, Math.min(64, cols)) })),
    attention: local(s, causalAttentionKernel({ seq: s.seq, localHeads: s.localHeads, headDim: s.headDim, ranks: s.ranks, ...tile, dtype: s.dtype, operands: 'f16' })),
  };
}

/** The layer's kernels, compiled (the local ones with an empty plan), the GEMMs at SIMT tiles. */
function compileKernels(s: TpLayerShape, variant: TpLayerVariant): TpLayerKernels {
  const { seq: S, hidden: H, localFfn: Fr, ranks, dtype } = s;
  const rows = { seq: S, ranks, rowBlock: s.rowBlock, colBlock: s.colBlock, dtype };
  const simtAttention = () => local(s, causalAttentionKernel({ seq: S, localHeads: s.localHeads, headDim: s.headDim, ranks, queryBlock: s.queryBlock, kvBlock: s.kvBlock, sliceD: s.sliceD, dtype }));
  return {
    rmsNorm: local(s, rmsNormKernel({ ...rows, hidden: H, eps: s.eps })),
    // A config tile that fits the matrix path alone: attention on matrices or not at all.
    attention: s.simtAttention ? simtAttention() : matrixAttentionKernels(s)!.attention,
    residual: local(s, residualKernel({ ...rows, hidden: H })),
    swiglu: local(s, swigluKernel({ seq: S, localFfn: Fr, ranks, rowBlock: 16, colBlock: s.ffnBlock, dtype })),
    ...compileGemms(s, variant, 'simt'),
  };
}

/**
 * The layer for `config` (checked: a `UsageError` names the constraint it breaks), its kernels
 * compiled. `variant` picks how its collectives run (default fused).
 */
export function tpLayer(config: TpLayerConfig, options: { readonly variant?: TpLayerVariant } = {}): TpLayer {
  const shape = tpLayerShape(config);
  const variant = options.variant ?? 'fused';
  if (variant !== 'fused' && variant !== 'sequential') throw new UsageError(`tp-layer: variant must be 'fused' or 'sequential', got ${String(variant)}`);
  const kernels = compileKernels(shape, variant);
  let tensorCoreGemms: GemmKernels | undefined;
  let matrixAttention: ReturnType<typeof matrixAttentionKernels>;
  const tensorCore = (attention: boolean): TpLayerKernels => ({
    ...kernels,
    ...(tensorCoreGemms ??= compileGemms(shape, variant, 'tensor-core')),
    ...(attention && (matrixAttention ??= matrixAttentionKernels(shape))),
  });
  return {
    config,
    shape,
    variant,
    kernels,
    load: (group, loadOptions = {}) => LoadedTpLayer.load(group, shape, variant, { simt: kernels, tensorCore }, loadOptions),
  };
}

export class LoadedTpLayer {
  private destroyed = false;

  private constructor(
    /** The device group it was loaded on, where its tensors live. */
    readonly group: DeviceGroup,
    readonly shape: TpLayerShape,
    /** How the GEMMs were lowered on the group. */
    readonly gemmTarget: 'simt' | 'subgroup-matrix',
    /** How attention was lowered: its products on subgroup matrices (f16, after `qkvHalf`) or SIMT. */
    readonly attentionTarget: 'simt' | 'subgroup-matrix',
    private readonly programs: { readonly [K in TpLayerKernelName]?: Program },
    private readonly activations: Activations,
  ) {}

  /** @internal tpLayer(...).load */
  static async load(
    group: DeviceGroup,
    s: TpLayerShape,
    variant: TpLayerVariant,
    kernels: { readonly simt: TpLayerKernels; readonly tensorCore: (attention: boolean) => TpLayerKernels },
    options: TpLayerLoadOptions,
  ): Promise<LoadedTpLayer> {
    const codegen: CodegenOptions = { ...options.codegen, ...(variant === 'sequential' && { phasing: 'sequential' as const }) };
    const requested = options.target ?? 'auto';
    const target = s.dtype === 'f16' ? gemmTargetFor(requested, group.devices, s.dtype) : undefined;
    if (!s.simtAttention && !target) {
      throw new UsageError(`tp-layer: attention tile ${s.queryBlock}x${s.kvBlock}x${s.sliceD} fits subgroup matrices only, and the layer's target is SIMT here (target ${typeof requested === 'string' ? requested : 'given'}, ${s.dtype})`);
    }
    if (target) {
      // Attention on matrices where the shape has a tile for them; under auto, one that does not lower stays SIMT.
      const simtAttention = requested === 'simt-attention' && s.simtAttention;
      const tries = simtAttention ? [false] : s.matrixAttention && s.simtAttention ? [true, false] : [!!s.matrixAttention];
      for (const attention of tries) {
        try {
          return await LoadedTpLayer.loadKernels(group, s, kernels.tensorCore(attention), codegen, target, attention);
        } catch (e) {
          if ((requested !== 'auto' && requested !== 'simt-attention') || !(e instanceof CompileError)) throw e;
        }
      }
      if (!s.simtAttention) throw new UsageError(`tp-layer: attention tile ${s.queryBlock}x${s.kvBlock}x${s.sliceD} fits subgroup matrices only, and did not lower on them here`);
    }
    return LoadedTpLayer.loadKernels(group, s, kernels.simt, codegen, undefined, false);
  }

  /** Loads `kernels`, the GEMMs (and, with `matrixAttention`, attention) on `target` where given, and allocates the activations. */
  private static async loadKernels(
    group: DeviceGroup,
    s: TpLayerShape,
    kernels: TpLayerKernels,
    codegen: CodegenOptions,
    target: SubgroupMatrixTarget | undefined,
    matrixAttention: boolean,
  ): Promise<LoadedTpLayer> {
    const onTarget: readonly TpLayerKernelName[] = [...GEMM_NAMES, ...(matrixAttention ? (['attention'] as const) : [])];
    const loaded: Partial<Record<TpLayerKernelName, Program>> = {};
    const made: Tensor[] = [];
    try {
      for (const name of Object.keys(kernels) as TpLayerKernelName[]) {
        loaded[name] = await group.load(kernels[name]!, { codegen: target && onTarget.includes(name) ? { ...codegen, target } : codegen });
      }
      const p = loaded as Record<Exclude<TpLayerKernelName, 'qkvHalf'>, Program> & { qkvHalf?: Program };
      const tile = matrixAttention ? s.matrixAttention! : s;
      // Zeros, asked for: each is written by its step before it is read, bar the rows no step owns.
      const zeros = async (spec: TensorSpec) => {
        const t = await group.tensor(spec, { fill: 0 });
        made.push(t);
        return t;
      };
      const mask = await group.tensor(p.attention.spec('MASK'), Array.from({ length: s.ranks }, () => causalMask(tile)));
      made.push(mask);
      const activations: Activations = {
        xn: await zeros(p.rmsNorm.spec('Y')),
        qkv: await zeros(p.qkv.spec('C')),
        ...(p.qkvHalf && { qkvHalf: await zeros(p.qkvHalf.spec('QKVH')) }),
        mask,
        o: await zeros(p.attention.spec('O')),
        y: await zeros(p.outProj.spec('C')),
        x1: await zeros(p.residual.spec('Out')),
        x1n: await zeros(p.rmsNorm.spec('Y')),
        gu: await zeros(p.gateUp.spec('C')),
        a: await zeros(p.swiglu.spec('A')),
        y2: await zeros(p.down.spec('C')),
        out: await zeros(p.residual.spec('Out')),
      };
      return new LoadedTpLayer(group, s, target ? 'subgroup-matrix' : 'simt', matrixAttention ? 'subgroup-matrix' : 'simt', p, activations);
    } catch (e) {
      made.forEach((t) => t.destroy());
      Object.values(loaded).forEach((program) => program.destroy());
      throw e;
    }
  }

  /** The layer's inputs as tensors on the group, each checked against its spec (`tpLayerInputSpecs`). */
  async tensors(inputs: TpLayerInputs): Promise<TpLayerTensors> {
    this.checkLive();
    if (typeof inputs !== 'object' || inputs === null) throw new UsageError('tp-layer: inputs must be an object { x, gamma1, wqkv, wo, gamma2, wgu, wd }');
    const specs = tpLayerInputSpecs(this.shape);
    const names = Object.keys(specs) as (keyof TpLayerInputs)[];
    const unknown = Object.keys(inputs).filter((k) => !names.includes(k as keyof TpLayerInputs));
    if (unknown.length > 0) throw new UsageError(`tp-layer: unknown input ${unknown.join(', ')}; the inputs are ${names.join(', ')}`);
    const made: Partial<Record<keyof TpLayerInputs, Tensor>> = {};
    try {
      for (const name of names) {
        if (inputs[name] === undefined) throw new UsageError(`tp-layer: input ${name} is missing; the inputs are ${names.join(', ')}`);
        made[name] = await this.group.tensor(specs[name], inputs[name]);
      }
    } catch (e) {
      Object.values(made).forEach((t) => t.destroy());
      throw e;
    }
    return made as TpLayerTensors;
  }

  /** The ten steps of one run over `t` (eleven with attention on subgroup matrices), in order, each a program and its tensors. */
  steps(t: TpLayerTensors): TpLayerStep[] {
    const a = this.activations;
    const attention: TpLayerStep[] = a.qkvHalf
      ? [
          { name: 'qkv-to-f16', kernel: 'qkvHalf', tensors: { QKV: a.qkv, QKVH: a.qkvHalf } },
          { name: 'attention', kernel: 'attention', tensors: { QKV: a.qkvHalf, MASK: a.mask, O: a.o } },
        ]
      : [{ name: 'attention', kernel: 'attention', tensors: { QKV: a.qkv, MASK: a.mask, O: a.o } }];
    return [
      { name: 'rms-norm-1', kernel: 'rmsNorm', tensors: { X: t.x, gamma: t.gamma1, Y: a.xn } },
      { name: 'all-gather+qkv', kernel: 'qkv', tensors: { A: a.xn, B: t.wqkv, C: a.qkv } },
      ...attention,
      { name: 'out-proj+reduce-scatter', kernel: 'outProj', tensors: { A: a.o, B: t.wo, C: a.y } },
      { name: 'residual-1', kernel: 'residual', tensors: { X: t.x, Y: a.y, Out: a.x1 } },
      { name: 'rms-norm-2', kernel: 'rmsNorm', tensors: { X: a.x1, gamma: t.gamma2, Y: a.x1n } },
      { name: 'all-gather+gate-up', kernel: 'gateUp', tensors: { A: a.x1n, B: t.wgu, C: a.gu } },
      { name: 'swiglu', kernel: 'swiglu', tensors: { GU: a.gu, A: a.a } },
      { name: 'down+reduce-scatter', kernel: 'down', tensors: { A: a.a, B: t.wd, C: a.y2 } },
      { name: 'residual-2', kernel: 'residual', tensors: { X: a.x1, Y: a.y2, Out: a.out } },
    ];
  }

  /** The program of one of the layer's kernels. */
  program(kernel: TpLayerKernelName): Program {
    const program = this.programs[kernel];
    if (!program) throw new UsageError(`tp-layer: kernel ${kernel} is not loaded: attention runs ${this.attentionTarget === 'simt' ? 'SIMT, on f32 QKV' : 'on subgroup matrices'}`);
    return program;
  }

  /**
   * Runs the ten steps over `t`; returns the output tensor [S, H] (each rank's rows are its shard of
   * the layer's output), which the layer owns and the next run overwrites.
   */
  async run(t: TpLayerTensors): Promise<Tensor> {
    this.checkLive();
    for (const step of this.steps(t)) await this.program(step.kernel).run(step.tensors);
    return this.activations.out;
  }

  /** Frees the layer's programs and activations (not the input tensors). */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    Object.values(this.activations).forEach((t: Tensor | undefined) => t?.destroy());
    Object.values(this.programs).forEach((p: Program | undefined) => p?.destroy());
  }

  private checkLive(): void {
    if (this.destroyed) throw new UsageError('tp-layer: the layer was destroyed');
  }
}
