/**
 * How a kernel's tiles map onto one workgroup. The register tile is the shape of the kernel's
 * stored (and dot) results, [BM, BN]: a TY×TX grid of threads each holds a TM×TN block of it. Along
 * each axis a thread owns groups of G = 4 consecutive rows (columns) when TM (TN) is a multiple of 4,
 * else G = 1, the groups strided by TY·G: row(i) = ⌊i/G⌋·TY·G + ty·G + i mod G. Neighbouring threads
 * thus touch neighbouring addresses, and a thread reads its dot fragments as vec4s. Loads that feed a
 * `dot` are staged in workgroup memory (the A operand transposed, K-major, so that its rows are
 * contiguous too; a `transpose_b` B operand likewise, so that it lies as a plain B would); every other
 * tile value lives in registers. A register tile that a dot reads (attention's P in P·V) is copied into
 * workgroup memory, in its staged form, just before the dot. A `reduce` combines each thread's own
 * elements, then the partials of the threads that share a row (column) through a workgroup scratch.
 */
import { error, type Diagnostic, type Module, type Op, type ReduceOp, type Shape, type TileValue } from '@syncopate/ir';
import type { MatrixDotPlan } from './matrix-dots.js';
import type { SubgroupMatrixPlan } from './subgroup-matrix.js';
import { walkOps } from './walk-ops.js';

export interface ThreadLayout {
  readonly bm: number;
  readonly bn: number;
  readonly ty: number;
  readonly tx: number;
  readonly tm: number;
  readonly tn: number;
  /** Consecutive rows (columns) a thread owns together: 4, or 1 when TM (TN) is not a multiple of 4. */
  readonly gm: number;
  readonly gn: number;
}

export interface KernelLayout {
  readonly threads: ThreadLayout;
  /** Value ids of loads staged in workgroup memory (dot operands). */
  readonly shared: ReadonlySet<number>;
  /** Staged values stored transposed (K-major): A operands, and B operands of a `transpose_b` dot. */
  readonly transposed: ReadonlySet<number>;
  /** Staged values a dot reads as B (along the tile's columns); the others are A operands. */
  readonly bOperands: ReadonlySet<number>;
  /** Register tiles a dot reads: copied into workgroup memory, staged like a load, right before it. */
  readonly registerOperands: ReadonlySet<number>;
  /** f32 words of workgroup scratch the reductions need: one partial per (row, thread along it). */
  readonly reduceScratch: number;
  /** Set when dots lower to subgroup matrices (subgroup-matrix.ts) instead of the SIMT loop. */
  readonly matrix?: SubgroupMatrixPlan;
  /** Set when a SIMT kernel's dots alone lower to subgroup matrices (matrix-dots.ts). */
  readonly matrixDots?: MatrixDotPlan;
}

/** The largest power of two up to 16 that divides `n`. */
function threadsAlong(n: number): number {
  let t = 16;
  while (n % t !== 0) t /= 2;
  return t;
}

export function kernelLayout(module: Module): { layout?: KernelLayout; problems: Diagnostic[] } {
  const problems: Diagnostic[] = [];
  const unsupported = (op: Op, why: string, value?: TileValue) =>
    problems.push(error('codegen/unsupported', why, { op: op.op, ...(value ? { value: value.name } : {}), ...(op.loc ? { loc: op.loc } : {}) }));
  let tile: Shape | undefined;
  const shared = new Set<number>();
  const transposed = new Set<number>();
  const asB = new Set<number>();
  const registerOperands = new Set<number>();
  const roles = new Map<number, string>();
  const reduces: ReduceOp[] = [];
  const loads = new Map<number, Op>();
  walkOps(module.kernel.body, (op) => {
    if (op.op === 'load') loads.set(op.result.id, op);
    if (op.op === 'dot') {
      tile ??= op.result.type.shape;
      for (const [operand, role] of [[op.a, 'A'], [op.b, op.transposeB ? 'transposed B' : 'B']] as const) {
        (loads.has(operand.id) ? shared : registerOperands).add(operand.id);
        const earlier = roles.get(operand.id);
        if (earlier !== undefined && earlier !== role) unsupported(op, `%${operand.name} feeds one dot as ${earlier} and another as ${role}; a staged tile has one layout`, operand);
        roles.set(operand.id, role);
      }
      transposed.add(op.a.id);
      if (op.transposeB) transposed.add(op.b.id);
      asB.add(op.b.id);
    }
    if (op.op === 'reduce') reduces.push(op);
    if (op.op === 'store') tile ??= op.value.type.shape;
    // A thread reads the indices of its own rows: the index is a register column, [BM, 1].
    if (op.op === 'gather' && op.index.type.shape.length !== 2) unsupported(op, `the WGSL backend takes a gather's index as a [BM, 1] tile; %${op.index.name} is [${op.index.type.shape}]`, op.index);
  });
  if (!tile) {
    problems.push(error('codegen/unsupported', 'the kernel stores nothing: there is no tile to lay out', { op: 'kernel' }));
    return { problems };
  }
  if (tile.length !== 2) {
    problems.push(error('codegen/unsupported', `the WGSL backend lays out 2-D tiles; this kernel's tile is [${tile}]`, { op: 'kernel' }));
    return { problems };
  }
  const [bm, bn] = tile as [number, number];
  const ty = threadsAlong(bm);
  const tx = threadsAlong(bn);
  const tm = bm / ty;
  const tn = bn / tx;
  const threads = { bm, bn, ty, tx, tm, tn, gm: tm % 4 === 0 ? 4 : 1, gn: tn % 4 === 0 ? 4 : 1 };
  walkOps(module.kernel.body, (op) => {
    const value = 'result' in op ? op.result : op.op === 'store' ? op.value : undefined;
    if (!value || value.type.kind !== 'tile' || shared.has(value.id)) return;
    const s = value.type.shape;
    const fits = s.length === 0 || (s.length === 2 && (s[0] === 1 || s[0] === bm) && (s[1] === 1 || s[1] === bn));
    if (!fits) unsupported(op, `%${value.name} is [${s}]; register values must broadcast to the [${bm}, ${bn}] tile`, value as TileValue);
  });
  for (const id of shared) {
    const load = loads.get(id);
    if (load?.op === 'load' && load.result.type.shape.length !== 2) unsupported(load, 'dot operands must be 2-D', load.result);
  }
  walkOps(module.kernel.body, (op) => {
    if (op.op !== 'dot') return;
    for (const v of [op.a, op.b]) {
      const s = v.type.shape;
      if (registerOperands.has(v.id) && (s.length !== 2 || s[0] !== bm || s[1] !== bn)) {
        unsupported(op, `%${v.name} is [${s}], a dot operand held in registers; the WGSL backend stages one only as the whole [${bm}, ${bn}] register tile`, v);
      }
    }
  });
  for (const op of reduces) {
    if (shared.has(op.value.id)) unsupported(op, `%${op.value.name} is staged for a dot; the WGSL backend reduces register tiles only`, op.value);
    if (op.value.type.shape.length !== 2) unsupported(op, `%${op.value.name} is [${op.value.type.shape}]; the WGSL backend reduces 2-D tiles`, op.value);
  }
  // Axis 1 keeps one partial per (row, column thread); axis 0 one per (column, row thread).
  const reduceScratch = Math.max(0, ...reduces.map((op) => (op.axis === 1 ? bm * tx : bn * ty)));
  return problems.length > 0 ? { problems } : { layout: { threads, shared, transposed, bOperands: asB, registerOperands, reduceScratch }, problems };
}
