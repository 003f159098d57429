/**
 * The subgroup-matrix lowering of the tile-level `dot` (tensor cores through Dawn's
 * `chromium_experimental_subgroup_matrix`; the text of each operation is in subgroup-matrix-ops.ts).
 *
 * A workgroup computes the kernel's [BM, BN] tile with SM×SN subgroups; subgroup s owns FM×FN
 * config-sized (M×N) accumulators:
 *
 *   rows (s div SN)·FM·M + [0, FM·M), columns (s mod SN)·FN·N + [0, FN·N).
 *
 * Staging. The dot's operands are staged row-major in workgroup memory, each row padded by 8
 * elements (16 bytes) so that the 16-byte rows a matrix load reads fall in different banks; A as
 * [BM][BK+8], B as [BK][BN+8], two copies of each where they fit (STAGES), so one barrier per K step
 * suffices: step i computes on copy i mod 2 while the tiles of step i+1, fetched into registers
 * before the compute, are written into the other copy after it. A tile that lies inside its tensor,
 * starting on a 16-byte boundary in a tensor whose rows are whole 16-byte words, is fetched with
 * 16-byte loads through a read-only `array<vec4<u32>>` view of the tensor's buffer (Vec4View; only
 * for tensors the kernel never writes: two bindings of one buffer must both be read-only) and
 * unpacked into the padded rows: on the H100 this kernel ran 2x the one with matrix copies (118 vs
 * 58 TFLOP/s at 8192³; a matrix load from global memory and a matrix store into workgroup memory,
 * still used for tensors without a view; benchmarks/gemm.md, "The port"). Any other tile goes element
 * by element straight into workgroup memory after the step's MMAs, zero outside the tensor, so edge
 * tiles in M, N and K multiply zeros; it holds no registers across the MMAs (the prefetch registers
 * of an edge path, live beside the words in every tile, cost register budget and so occupancy).
 *
 * Store. A tile inside C goes straight from the accumulators to C; an edge tile goes through a
 * per-subgroup M×N scratch, one matrix at a time, and the workgroup writes the elements inside C.
 *
 * On the H100 this kernel first read zeros from its staged arrays: NVIDIA's driver (580) puts
 * subgroup-matrix loads from workgroup arrays off when a workgroup variable beside them is not a whole
 * number of 16-byte words (a lone u32), found by benchmarks/src/subgroup-matrix-probe.ts; every
 * workgroup variable is now whole words (writer.ts, wholeWords). Every loop over matrices is unrolled
 * in the WGSL text, so each matrix is named by a constant index (a first version's edge tiles, which
 * indexed them dynamically, were wrong; whether that was the cause was never isolated). The emulated
 * form (subgroup-matrix-ops.ts) runs the same indexing, staging and masks on lavapipe.
 *
 * Offsets passed to the matrix builtins are subgroup-uniform: they derive from the ticket (a
 * workgroup-uniform load), the read-only tables, loop counters and `@builtin(subgroup_id)` (DESIGN.md,
 * facts: the uniformity rule), and every branch around them tests workgroup-uniform values.
 */
import { dtypeBytes, error, type AffineExpr, type Diagnostic, type LoadOp, type Module, type Op, type Value } from '@syncopate/ir';
import type { TensorBinding } from '../fused-kernel.js';
import type { ChunkTable } from '../gpu-signal/chunk-table.js';
import type { KernelLayout } from './layout.js';
import type { SubgroupMatrixTarget } from './matmul-strategy.js';
import { emulatedMatrixOps, matrixShape, nativeMatrixOps, type MatrixOps, type MatrixRole } from './subgroup-matrix-ops.js';
import { identifier, wholeWords, type WgslWriter } from './writer.js';
import { walkOps } from './walk-ops.js';

/** Elements each staged row is padded by: 16 bytes of f16, which skews rows across banks. */
export const STAGING_PAD = 8;
/** Workgroup memory assumed when the target does not say (the H100's limit). */
export const DEFAULT_WORKGROUP_BYTES = 49152;

export interface SubgroupMatrixPlan {
  readonly target: SubgroupMatrixTarget;
  readonly m: number;
  readonly n: number;
  readonly k: number;
  /** Subgroups along the tile's rows and columns. */
  readonly sm: number;
  readonly sn: number;
  /** Matrices per subgroup along rows and columns. */
  readonly fm: number;
  readonly fn: number;
  readonly subgroupSize: number;
  /** Copies of each staged tile in workgroup memory: 2 (double-buffered) or 1. */
  readonly stages: number;
  /** Ids of the tile values held as subgroup matrices (dot results, their accumulators, loop-carried). */
  readonly matrices: ReadonlySet<number>;
}

/** A staged load as the emitter sees it: where the tile comes from and where it goes. */
export interface StagedTile {
  /** The workgroup array, e.g. `sh_a`. */
  readonly array: string;
  /** `left` for a dot's A operand, `right` for its B. */
  readonly role: 'left' | 'right';
  /** The tensor's storage array, e.g. `t_A`, and its element type. */
  readonly tensor: string;
  readonly dtype: string;
  /** The tensor's [rows, cols] and the tile's. */
  readonly shape: readonly [number, number];
  readonly tile: readonly [number, number];
  /** Index of the rank's first element (u32), and the tile's first row and column (i32). */
  readonly base: string;
  readonly row0: string;
  readonly col0: string;
  /** The tensor's `array<vec4<u32>>` view, e.g. `v4_A`, when it has one (Vec4View). */
  readonly vec4?: string;
  /** Proved inside the tensor (and word-aligned with a view) for every workgroup and step (static-bounds.ts): no edge path. */
  readonly alwaysInside?: boolean;
  /** With a view: the first column proved a multiple of 8 for every workgroup and step (starts on a word). */
  readonly alwaysWordAligned?: boolean;
}

/** A read-only `array<vec4<u32>>` binding of a tensor's buffer beside its own. */
export interface Vec4View {
  readonly binding: number;
  readonly tensor: string;
}

/**
 * The tensors the subgroup-matrix path fetches through 16-byte views, bound from `firstBinding` on:
 * f16 matrices with staged loads whose rows are whole 16-byte words and that the kernel never writes
 * (no store into them, no chunk of them moved or added in the kernel).
 */
export function vec4Views(module: Module, layout: KernelLayout, table: ChunkTable, tensors: readonly TensorBinding[], firstBinding: number): Vec4View[] {
  if (!layout.matrix) return [];
  const written = new Set(table.entries.map((e) => e.chunk.tensor));
  const staged = new Set<string>();
  walkOps(module.kernel.body, (op) => {
    if (op.op === 'store') written.add(op.tensor);
    if (op.op === 'load' && layout.shared.has(op.result.id)) staged.add(op.tensor);
  });
  return tensors
    .filter((t) => staged.has(t.name) && !written.has(t.name) && t.dtype === 'f16' && t.shape.length === 2 && t.shape[1]! % 8 === 0)
    .map((t, i) => ({ binding: firstBinding + i, tensor: t.name }));
}

/** The StagedTile of a staged load of `tensor`; `affine` writes an offset as an i32 expression. */
export function stagedTile(load: LoadOp, tensor: TensorBinding, layout: KernelLayout, affine: (e: AffineExpr) => string, view = false): StagedTile {
  return {
    array: identifier('sh_', load.result.name),
    role: layout.bOperands.has(load.result.id) ? 'right' : 'left',
    tensor: identifier('t_', tensor.name),
    dtype: tensor.dtype === 'f16' ? 'f16' : 'f32',
    shape: tensor.shape as [number, number],
    tile: load.result.type.shape as [number, number],
    base: `rank * ${tensor.elementsPerRank}u`,
    row0: affine(load.offsets[0]!),
    col0: affine(load.offsets[1]!),
    ...(view && { vec4: identifier('v4_', tensor.name) }),
  };
}

/**
 * The subgroup grid for a tile of `rows`×`cols` matrices: as many subgroups as keep at least 4
 * matrices each, up to 8 (256 invocations at 32), split so that each subgroup's block needs the
 * fewest matrix loads per multiply (FM + FN smallest for FM·FN fixed), ties to more subgroups along
 * the rows (each subgroup's block wider than tall): on the H100 8 subgroups of 2x4 matrices beat 8 of
 * 4x2 at 128x128x32 (176.9 vs 165.1 TFLOP/s at 8192³, benchmarks/gemm.md).
 */
export function subgroupGrid(rows: number, cols: number): [number, number] {
  let best: [number, number] = [1, 1];
  let bestScore = Infinity;
  for (const total of [8, 4, 2, 1]) {
    if (total > 1 && (rows * cols) / total < 4) continue;
    for (let sm = 1; sm <= total; sm *= 2) {
      const sn = total / sm;
      if (rows % sm !== 0 || cols % sn !== 0) continue;
      const score = rows / sm + cols / sn;
      if (score < bestScore || (score === bestScore && sm > best[0])) {
        best = [sm, sn];
        bestScore = score;
      }
    }
    if (bestScore < Infinity) return best;
  }
  return best;
}

/** The values held as matrices: every dot's result and accumulator, and what a loop carries of them. */
function matrixValues(module: Module): Set<number> {
  const matrices = new Set<number>();
  walkOps(module.kernel.body, (op) => {
    if (op.op !== 'dot') return;
    matrices.add(op.result.id);
    if (op.acc) matrices.add(op.acc.id);
  });
  for (let changed = true; changed; ) {
    changed = false;
    walkOps(module.kernel.body, (op) => {
      if (op.op !== 'for') return;
      const y = op.body[op.body.length - 1];
      op.iterArgs.forEach((arg, i) => {
        const group = [op.inits[i]!, arg, op.results[i]!, ...(y?.op === 'yield' ? [y.values[i]!] : [])];
        if (group.some((v) => matrices.has(v.id)) && !group.every((v) => matrices.has(v.id))) {
          group.forEach((v) => matrices.add(v.id));
          changed = true;
        }
      });
    });
  }
  return matrices;
}

/** Bytes of workgroup memory the staged tiles (per copy) and the store's scratch take. */
function stagingBytes(module: Module, simt: KernelLayout): number {
  let bytes = 0;
  walkOps(module.kernel.body, (op) => {
    if (op.op !== 'load' || !simt.shared.has(op.result.id)) return;
    const [r, c] = op.result.type.shape as [number, number];
    bytes += r * (c + STAGING_PAD) * dtypeBytes(op.result.type.dtype);
  });
  return bytes;
}

/**
 * The layout for the subgroup-matrix path: the SIMT layout's staged loads, a one-dimensional
 * workgroup of SM·SN subgroups (Dawn requires x to be a multiple of the subgroup size), and the plan.
 */
export function subgroupMatrixLayout(module: Module, simt: KernelLayout, target: SubgroupMatrixTarget): { layout?: KernelLayout; problems: Diagnostic[] } {
  const problems: Diagnostic[] = [];
  const { config } = target;
  const unsupported = (op: Op, why: string, value?: Value) =>
    problems.push(error('codegen/unsupported', `subgroup-matrix target: ${why}`, { op: op.op, ...(value ? { value: value.name } : {}), ...(op.loc ? { loc: op.loc } : {}) }));
  const { bm, bn } = simt.threads;
  const matrices = matrixValues(module);
  // A matrix is loaded from or stored to a tensor with the tensor's row length as its stride, which
  // must be at least the matrix's width (WGSL's minimum stride): rows of 8 cannot hold 16-wide matrices.
  const rowLength = (tensor: string) => module.tensors.find((t) => t.name === tensor)?.shape.at(-1) ?? Infinity;
  const loadedFrom = new Map<number, string>();
  walkOps(module.kernel.body, (op) => {
    if (op.op === 'load') loadedFrom.set(op.result.id, op.tensor);
  });
  const checkStride = (op: Op, tensor: string | undefined, width: number, what: string) => {
    if (tensor !== undefined && rowLength(tensor) < width) unsupported(op, `@${tensor}'s rows (${rowLength(tensor)} elements) are narrower than the ${width}-wide matrices of its ${what}`);
  };

  walkOps(module.kernel.body, (op) => {
    switch (op.op) {
      case 'dot': {
        checkStride(op, loadedFrom.get(op.a.id), config.K, 'left operand');
        checkStride(op, loadedFrom.get(op.b.id), config.N, 'right operand');
        const k = op.a.type.shape[1]!;
        if (op.a.type.dtype !== config.componentType || op.b.type.dtype !== config.componentType) {
          unsupported(op, `dot operands are ${op.a.type.dtype} and ${op.b.type.dtype}; the ${config.M}x${config.N}x${config.K} configuration takes ${config.componentType}`, op.result);
        }
        if (op.result.type.dtype !== config.resultComponentType) {
          unsupported(op, `the dot accumulates in ${op.result.type.dtype}; the configuration in ${config.resultComponentType}`, op.result);
        }
        if (k % config.K !== 0) unsupported(op, `the dot's K tile (${k}) is not a multiple of the configuration's K (${config.K})`, op.result);
        if (op.transposeB) unsupported(op, 'a transpose_b dot is not lowered on this path yet', op.result);
        for (const operand of [op.a, op.b]) {
          if (!simt.shared.has(operand.id)) unsupported(op, `dot operands must be loads; %${operand.name} is not one`, operand);
        }
        return;
      }
      case 'store':
        if (matrices.has(op.value.id)) {
          checkStride(op, op.tensor, config.N, 'result');
          const tensor = module.tensors.find((t) => t.name === op.tensor);
          if (tensor && tensor.dtype !== config.resultComponentType) {
            unsupported(op, `@${op.tensor} is ${tensor.dtype}; an accumulator is stored as ${config.resultComponentType}`, op.value);
          }
        } else if (op.value.type.kind === 'tile' && op.value.type.shape.length > 0) {
          unsupported(op, `only dot accumulators are stored from subgroup matrices; %${op.value.name} is not one`, op.value);
        }
        return;
      case 'for':
      case 'yield':
        return;
      default: {
        // Every other tile value would need the SIMT thread layout, which this path does not have.
        const value = 'result' in op ? op.result : undefined;
        if (!value || value.type.kind !== 'tile' || value.type.shape.length === 0) return;
        const staged = op.op === 'load' && simt.shared.has(value.id);
        if (!staged && !matrices.has(value.id)) unsupported(op, `${op.op} of a tile is not lowered on this path yet (%${value.name})`, value);
      }
    }
  });
  if (bm % config.M !== 0 || bn % config.N !== 0) {
    problems.push(error('codegen/unsupported', `subgroup-matrix target: the tile [${bm}, ${bn}] is not a multiple of the configuration's ${config.M}x${config.N}`, { op: 'kernel' }));
  }
  if (problems.length > 0) return { problems };

  const [sm, sn] = target.subgroups ?? subgroupGrid(bm / config.M, bn / config.N);
  if (!(sm >= 1 && sn >= 1) || (bm / config.M) % sm !== 0 || (bn / config.N) % sn !== 0) {
    problems.push(error('codegen/unsupported', `subgroup-matrix target: ${sm}x${sn} subgroups do not divide the [${bm}, ${bn}] tile into ${config.M}x${config.N} matrices`, { op: 'kernel' }));
    return { problems };
  }
  const subgroupSize = target.subgroupSize ?? 32;
  // The store's scratch: one M×N matrix of the result type per subgroup.
  const scratch = sm * sn * config.M * config.N * (config.resultComponentType === 'f16' ? 2 : 4);
  const staged = stagingBytes(module, simt);
  const budget = (target.workgroupBytes ?? DEFAULT_WORKGROUP_BYTES) - 64; // the ticket and the publish queue
  const stages = 2 * staged + scratch <= budget ? 2 : 1;
  if (staged + scratch > budget) {
    problems.push(
      error('codegen/unsupported', `subgroup-matrix target: the staged tiles and store scratch need ${staged + scratch} bytes of workgroup memory; the target allows ${budget + 64}`, { op: 'kernel' }),
    );
    return { problems };
  }
  const plan: SubgroupMatrixPlan = { target, m: config.M, n: config.N, k: config.K, sm, sn, fm: bm / config.M / sm, fn: bn / config.N / sn, subgroupSize, stages, matrices };
  // Register tiles are not used on this path: tm/tn of 1 and groups of 1.
  const threads = { bm, bn, tx: sm * sn * subgroupSize, ty: 1, tm: 1, tn: 1, gm: 1, gn: 1 };
  return { layout: { ...simt, threads, matrix: plan }, problems };
}

/** Text of the subgroup-matrix path; the kernel emitter calls it where the SIMT path would emit. */
export class SubgroupMatrixEmitter {
  private readonly ops: MatrixOps;
  /** Per workgroup array: its row stride and the expression of the copy the dot reads now. */
  private readonly arrays = new Map<string, { stride: number; size: number; current: string }>();
  /** Staged loops are numbered so nested or successive ones keep their own registers. */
  private loops = 0;

  constructor(
    private readonly w: WgslWriter,
    private readonly p: SubgroupMatrixPlan,
  ) {
    this.ops = p.target.emulate ? emulatedMatrixOps(p.target.config) : nativeMatrixOps(p.target.config);
  }

  private get count(): number {
    return this.p.fm * this.p.fn;
  }

  private get subgroups(): number {
    return this.p.sm * this.p.sn;
  }

  enables(): void {
    for (const line of this.ops.enables) this.w.line(line);
  }

  /** Extra parameters of `main`. */
  entryParams(): string {
    return this.ops.entryParams;
  }

  /** Module-scope constants, and the edge store's scratch unless every store is proved whole (`spill` false). */
  declarations(spill = true): void {
    const { p, w } = this;
    const { config } = p.target;
    const how = p.target.emulate ? ', emulated: every invocation holds whole matrices' : '';
    w.line(
      `// Subgroup matrices ${p.m}x${p.n}x${p.k} (${config.componentType} -> ${config.resultComponentType}): ${p.sm}x${p.sn} subgroups of ${p.subgroupSize}, each ${p.fm}x${p.fn} matrices; ${p.stages} staging cop${p.stages === 1 ? 'y' : 'ies'}${how}.`,
    );
    w.line(`const SG_N: u32 = ${p.sn}u;`);
    w.line(`const SUBGROUPS: u32 = ${this.subgroups}u;`);
    if (spill) w.line(`var<workgroup> sh_spill: array<${config.resultComponentType}, ${this.subgroups * p.m * p.n}>; // an edge tile's matrices on their way to C, one per subgroup`);
  }

  /** A staged tile's workgroup array: rows padded by STAGING_PAD, `stages` copies. */
  sharedArray(name: string, rows: number, cols: number, dtype: string): void {
    // Rows start on 16-byte boundaries (matrix loads and stores need it), then skew by the pad.
    const stride = wholeWords(cols, dtype === 'f16' ? 8 : 4) + STAGING_PAD;
    const size = rows * stride;
    this.arrays.set(name, { stride, size, current: '0u' });
    this.w.line(`var<workgroup> ${name}: array<${dtype}, ${this.p.stages * size}>; // ${this.p.stages} x ${rows}x${cols}, rows padded to ${stride}`);
  }

  /** `sg_id` where emulated, and the first row and column of the subgroup's block (subgroup-uniform). */
  prologue(): void {
    const { p, w } = this;
    this.ops.defineSubgroupId(w, p.subgroupSize);
    w.line(`let sg_row = (sg_id / SG_N) * ${p.fm * p.m}u;`);
    w.line(`let sg_col = (sg_id % SG_N) * ${p.fn * p.n}u;`);
  }

  zeros(name: string, value: string): void {
    this.ops.declareArray(this.w, name, 'result', this.count, value === '0' ? undefined : value);
  }

  // ----- staging -----

  private array(t: StagedTile): { stride: number; size: number; current: string } {
    const a = this.arrays.get(t.array);
    if (!a) throw new Error(`unreachable: ${t.array} was not declared`);
    return a;
  }

  /** Matrices of the tile's role that tile it, when rows of the tensor start 16-byte aligned. */
  private copyMatrices(t: StagedTile): { rows: number; cols: number; count: number; perSubgroup: number } | undefined {
    const [fr, fc] = matrixShape(this.p.target.config, t.role);
    const bytes = t.dtype === 'f16' ? 2 : 4;
    if (t.dtype !== this.p.target.config.componentType || (t.shape[1] * bytes) % 16 !== 0) return undefined;
    if (t.tile[0] % fr !== 0 || t.tile[1] % fc !== 0) return undefined;
    const count = (t.tile[0] / fr) * (t.tile[1] / fc);
    return { rows: fr, cols: fc, count, perSubgroup: Math.ceil(count / this.subgroups) };
  }

  /** The 16-byte words of a tile fetched through its view: per row, in all, per invocation; undefined without one. */
  private words(t: StagedTile): { across: number; total: number; perThread: number } | undefined {
    if (!t.vec4 || t.tile[1] % 8 !== 0) return undefined;
    const across = t.tile[1] / 8;
    const total = t.tile[0] * across;
    return { across, total, perThread: Math.ceil(total / (this.subgroups * this.p.subgroupSize)) };
  }

  /**
   * The uniform test that `t` takes the fast path: fetched by words, that it starts on a word (the
   * words are masked at the tensor's edges); by matrices, that it lies inside its tensor.
   */
  private inside(t: StagedTile): string {
    if (t.alwaysInside) return 'true';
    // Rows of whole words: a tile that starts on a word is fetched by words, each masked at the edges.
    if (this.words(t)) return t.alwaysWordAligned ? 'true' : `(${t.col0}) % 8 == 0`;
    return `${t.row0} >= 0 && ${t.row0} + ${t.tile[0]} <= ${t.shape[0]} && ${t.col0} >= 0 && ${t.col0} + ${t.tile[1]} <= ${t.shape[1]}`;
  }

  /** `body` where `cond` holds: unguarded where it is the literal `true` (a tile proved inside). */
  private when(cond: string, body: () => void): void {
    this.w.block(cond === 'true' ? '' : `if (${cond})`, body);
  }

  /** `body` where `cond` fails: nothing where it is the literal `true`. */
  private unless(cond: string, body: () => void): void {
    if (cond !== 'true') this.w.block(`if (!(${cond}))`, body);
  }

  /** The name of loop `loop`'s let holding `inside` for its next step's `t`, or `true` where proved. */
  private nextInside(t: StagedTile, loop: number): string {
    return this.inside(t) === 'true' ? 'true' : `inside_next_${t.array}_${loop}`;
  }

  /** A uniform let holding `inside(t)`, or the literal `true` itself. */
  private insideLet(name: string, t: StagedTile, guard?: string): string {
    const test = this.inside(t);
    if (test === 'true') return 'true';
    this.w.line(`let ${name} = ${guard ? `${guard} && ` : ''}${test};`);
    return name;
  }

  private elementsPerThread(t: StagedTile): number {
    return Math.ceil((t.tile[0] * t.tile[1]) / (this.subgroups * this.p.subgroupSize));
  }

  /** Registers that carry an inside tile from global to workgroup memory, named after the loop. */
  private registers(t: StagedTile, loop: number): { matrices: string; words: string } {
    const suffix = `${t.array.replace(/^sh_/, '')}_${loop}`;
    return { matrices: `pm_${suffix}`, words: `pv_${suffix}` };
  }

  private declareRegisters(t: StagedTile, loop: number): void {
    const r = this.registers(t, loop);
    const words = this.words(t);
    const copy = this.copyMatrices(t);
    if (words) this.w.line(`var ${r.words}: array<vec4<u32>, ${words.perThread}>;`);
    else if (copy) this.ops.declareArray(this.w, r.matrices, t.role, copy.perSubgroup);
  }

  /** For each word this invocation carries: `body` with `v`, the word's index in the tile (guarded where the last round is partial). */
  private eachWord(t: StagedTile, body: (q: number) => string): void {
    const words = this.words(t)!;
    const threads = this.subgroups * this.p.subgroupSize;
    for (let q = 0; q < words.perThread; q++) {
      const guarded = (q + 1) * threads > words.total;
      this.w.line(`{ let v = lid + ${q * threads}u; ${guarded ? `if (v < ${words.total}u) { ${body(q)} }` : body(q)} }`);
    }
  }

  /** The `q`th matrix this subgroup copies: its first row and column in the tile. */
  private copyOrigin(t: StagedTile, q: number): [string, string] {
    const copy = this.copyMatrices(t)!;
    const across = t.tile[1] / copy.cols;
    // A subgroup past the last matrix copies one another subgroup copies too: the same values.
    const f = copy.count % this.subgroups === 0 ? `sg_id + ${q * this.subgroups}u` : `(sg_id + ${q * this.subgroups}u) % ${copy.count}u`;
    return [`(${f}) / ${across}u * ${copy.rows}u`, `(${f}) % ${across}u * ${copy.cols}u`];
  }

  /**
   * Global → registers, where `inside` (a uniform let) holds: by 16-byte words or by matrices. A tile
   * that is not inside takes no registers here: `put` reads it straight into workgroup memory. Edge
   * tiles lose the prefetch, but no per-element registers stay live across the step's MMAs (they
   * would count against every tile's register budget, and so against occupancy).
   */
  private fetch(t: StagedTile, loop: number, inside: string): void {
    const { w } = this;
    const r = this.registers(t, loop);
    const copy = this.copyMatrices(t);
    const words = this.words(t);
    const [, cols] = t.shape;
    if (words) {
      // Word v is row v / across, columns 8·(v % across) + [0, 8) of the tile; col0 is a multiple of 8 here,
      // and so is the row length: a word lies wholly inside the tensor or wholly outside (zeros).
      const at = `(${t.base} + (u32(${t.row0}) + v / ${words.across}u) * ${cols}u + u32(${t.col0})) / 8u + v % ${words.across}u`;
      const [rows] = t.shape;
      const load = (q: number) =>
        t.alwaysInside
          ? `${r.words}[${q}] = ${t.vec4}[${at}];`
          : `let r = ${t.row0} + i32(v / ${words.across}u); let c = ${t.col0} + i32(8u * (v % ${words.across}u)); ${r.words}[${q}] = vec4<u32>(); if (r >= 0 && r < ${rows} && c >= 0 && c < ${cols}) { ${r.words}[${q}] = ${t.vec4}[${at}]; }`;
      return void this.when(inside, () => this.eachWord(t, load));
    }
    if (!copy) return;
    this.when(inside, () => {
      for (let q = 0; q < copy.perSubgroup; q++) {
        const [fr, fc] = this.copyOrigin(t, q);
        this.ops.load(w, `${r.matrices}[${q}]`, t.role, t.tensor, `${t.base} + u32(${t.row0}) * ${cols}u + ${fr} * ${cols}u + u32(${t.col0}) + ${fc}`, `${cols}u`);
      }
    });
  }

  /** Into copy `into` (an element offset) of the tile's workgroup array: from `fetch`'s registers where `inside`, else element by element from global memory, zero outside the tensor. */
  private put(t: StagedTile, loop: number, inside: string, into: string): void {
    const { w } = this;
    const r = this.registers(t, loop);
    const copy = this.copyMatrices(t);
    const { stride } = this.array(t);
    const [rows, cols] = t.shape;
    const scalar = () =>
      w.block(`for (var p = 0u; p < ${this.elementsPerThread(t)}u; p++)`, () => {
        w.line('let e = lid + p * WORKGROUP_SIZE;');
        w.line(`let row = ${t.row0} + i32(e / ${t.tile[1]}u);`);
        w.line(`let col = ${t.col0} + i32(e % ${t.tile[1]}u);`);
        w.line(`var x = ${t.dtype}(0);`);
        w.line(`if (row >= 0 && row < ${rows} && col >= 0 && col < ${cols}) { x = ${t.tensor}[${t.base} + u32(row) * ${cols}u + u32(col)]; }`);
        w.line(`if (e < ${t.tile[0] * t.tile[1]}u) { ${t.array}[${into} + (e / ${t.tile[1]}u) * ${stride}u + e % ${t.tile[1]}u] = x; }`);
      });
    const words = this.words(t);
    if (words) {
      const unpack = (q: number) =>
        [`let at = ${into} + (v / ${words.across}u) * ${stride}u + (v % ${words.across}u) * 8u;`]
          .concat(['x', 'y', 'z', 'w'].map((c, i) => `let h${c} = bitcast<vec2<f16>>(${r.words}[${q}].${c}); ${t.array}[at + ${2 * i}u] = h${c}.x; ${t.array}[at + ${2 * i + 1}u] = h${c}.y;`))
          .join(' ');
      this.when(inside, () => this.eachWord(t, unpack));
      return void this.unless(inside, scalar);
    }
    if (!copy) return void scalar();
    this.when(inside, () => {
      for (let q = 0; q < copy.perSubgroup; q++) {
        const [fr, fc] = this.copyOrigin(t, q);
        this.ops.store(w, t.array, t.dtype, `${into} + ${fr} * ${stride}u + ${fc}`, `${r.matrices}[${q}]`, t.role, `${stride}u`);
      }
    });
    this.unless(inside, scalar);
  }

  /** A staged load outside a prefetched loop: the workgroup copies it into copy 0 (barriers around it are the caller's). */
  stage(t: StagedTile): void {
    const loop = this.loops++;
    const { w } = this;
    w.block('', () => {
      this.declareRegisters(t, loop);
      const inside = this.insideLet('inside', t);
      this.fetch(t, loop, inside);
      this.put(t, loop, inside, '0u');
    });
    this.array(t).current = '0u';
  }

  /**
   * Before a loop whose body opens with staged loads: registers for them, and step 0's tiles
   * (`first`, at the loop's lower bound) in copy 0. Returns the loop's number for the other hooks.
   */
  loopBefore(first: readonly StagedTile[]): number {
    const loop = this.loops++;
    const { w } = this;
    for (const t of first) this.declareRegisters(t, loop);
    w.line('workgroupBarrier(); // the workgroup arrays may still be read by earlier code');
    w.block('', () => {
      for (const t of first) {
        const inside = this.insideLet(`inside_${t.array}`, t);
        this.fetch(t, loop, inside);
        this.put(t, loop, inside, '0u');
      }
    });
    w.line('workgroupBarrier();');
    return loop;
  }

  /**
   * At the top of each step: which copy the dot reads (`step` is the iteration's index, uniform), and,
   * while there is a next step, its tiles (`next`) fetched into registers before the compute.
   */
  loopStepStart(loop: number, step: string, hasNext: string, next: readonly StagedTile[]): void {
    const { w } = this;
    w.line(`let step_${loop} = ${step};`);
    w.line(`let has_next_${loop} = ${hasNext};`);
    const inside = next.map((t) => {
      const a = this.array(t);
      a.current = this.p.stages === 2 ? `(step_${loop} % 2u) * ${a.size}u` : '0u';
      return this.insideLet(this.nextInside(t, loop), t, `has_next_${loop}`);
    });
    w.block(`if (has_next_${loop})`, () => next.forEach((t, i) => this.fetch(t, loop, inside[i]!)));
  }

  /**
   * After the step's compute: the next tiles into the other copy (double-buffered: nobody reads it
   * now), or, with one copy, into it once every subgroup is done with it; then one barrier.
   */
  loopStepEnd(loop: number, next: readonly StagedTile[]): void {
    const { w } = this;
    if (this.p.stages === 1) w.line('workgroupBarrier();');
    w.block(`if (has_next_${loop})`, () => {
      for (const t of next) {
        const a = this.array(t);
        const into = this.p.stages === 2 ? `((step_${loop} + 1u) % 2u) * ${a.size}u` : '0u';
        this.put(t, loop, this.nextInside(t, loop), into);
      }
    });
    w.line('workgroupBarrier();');
  }

  // ----- compute -----

  /** `acc += a·b` over the staged tiles: A [bm][k] and B [k][bn], both row-major with padded rows. */
  dot(acc: string, sa: string, sb: string, _bm: number, _bn: number, k: number): void {
    const { p, w } = this;
    const a = this.arrays.get(sa);
    const b = this.arrays.get(sb);
    if (!a || !b) throw new Error(`unreachable: the dot's operands ${sa}, ${sb} are not staged`);
    w.block('', () => {
      this.ops.declareArray(w, 'ma', 'left', p.fm);
      this.ops.declareArray(w, 'mb', 'right', p.fn);
      for (let kk = 0; kk < k; kk += p.k) {
        for (let i = 0; i < p.fm; i++) {
          this.ops.load(w, `ma[${i}]`, 'left', sa, `${a.current} + (sg_row + ${i * p.m}u) * ${a.stride}u + ${kk}u`, `${a.stride}u`);
        }
        for (let j = 0; j < p.fn; j++) {
          this.ops.load(w, `mb[${j}]`, 'right', sb, `${b.current} + ${kk * b.stride}u + sg_col + ${j * p.n}u`, `${b.stride}u`);
        }
        for (let i = 0; i < p.fm; i++) {
          for (let j = 0; j < p.fn; j++) this.ops.multiplyAccumulate(w, `${acc}[${i * p.fn + j}]`, `ma[${i}]`, `mb[${j}]`);
        }
      }
    });
  }

  /**
   * Stores the accumulator at (`row0`, `col0`) of a [rows, cols] tensor. `at(row, col)` is the element
   * index of the rank's copy; `bm`×`bn` the tile.
   */
  store(acc: string, ref: string, row0: string, col0: string, rows: number, cols: number, bm: number, bn: number, at: (row: string, col: string) => string, alwaysWhole = false): void {
    const { p, w } = this;
    const result: MatrixRole = 'result';
    const scalar = p.target.config.resultComponentType;
    w.line(`let row0 = ${row0};`);
    w.line(`let col0 = ${col0};`);
    // Straight to C only where C's rows start 16-byte aligned (a matrix store's rows are wide accesses).
    const direct = (cols * (scalar === 'f16' ? 2 : 4)) % 16 === 0;
    // Workgroup-uniform (from the tables), so the edge path may use barriers.
    const whole = direct && alwaysWhole ? 'true' : 'whole';
    if (whole !== 'true') w.line(`let whole = ${direct ? `row0 >= 0 && row0 + ${bm} <= ${rows} && col0 >= 0 && col0 + ${bn} <= ${cols}` : 'false'};`);
    if (direct) {
      this.when(whole, () => {
        for (let i = 0; i < p.fm; i++) {
          for (let j = 0; j < p.fn; j++) {
            const offset = at(`row0 + i32(sg_row + ${i * p.m}u)`, `col0 + i32(sg_col + ${j * p.n}u)`);
            this.ops.store(w, ref, scalar, offset, `${acc}[${i * p.fn + j}]`, result, `${cols}u`);
          }
        }
      });
    }
    this.unless(whole, () => {
      // Each subgroup parks one matrix at a time; the workgroup writes the elements inside C.
      const size = p.m * p.n;
      for (let i = 0; i < p.fm; i++) {
        for (let j = 0; j < p.fn; j++) {
          w.line('workgroupBarrier();');
          this.ops.store(w, 'sh_spill', scalar, `sg_id * ${size}u`, `${acc}[${i * p.fn + j}]`, result, `${p.n}u`);
          w.line('workgroupBarrier();');
          w.block(`for (var e = lid; e < SUBGROUPS * ${size}u; e += WORKGROUP_SIZE)`, () => {
            w.line(`let s = e / ${size}u;`);
            w.line(`let row = row0 + i32((s / SG_N) * ${p.fm * p.m}u + ${i * p.m}u + (e % ${size}u) / ${p.n}u);`);
            w.line(`let col = col0 + i32((s % SG_N) * ${p.fn * p.n}u + ${j * p.n}u + e % ${p.n}u);`);
            w.line(`if (row >= 0 && row < ${rows} && col >= 0 && col < ${cols}) { ${ref}[${at('row', 'col')}] = sh_spill[e]; }`);
          });
        }
      }
    });
  }
}
