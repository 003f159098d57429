/**
 * How a kernel's tiles map onto one workgroup. The register tile is the shape of the kernel's
 * stored (and dot) results, [BM, BN]: a TY×TX grid of threads each holds a TM×TN block of it. Along
 * each axis a thread owns groups of G = 4 consecutive rows (columns) when TM (TN) is a multiple of 4,
 * else G = 1, the groups strided by TY·G: row(i) = ⌊i/G⌋·TY·G + ty·G + i mod G. Neighbouring threads
 * thus touch neighbouring addresses, and a thread reads its dot fragments as vec4s. Loads that feed a
 * `dot` are staged in workgroup memory (the A operand transposed, K-major, so that its rows are
 * contiguous too); every other tile value lives in registers.
 */
import { error, type Diagnostic, type Module, type Op, type Shape, type TileValue } from '@syncopate/ir';
import type { SubgroupMatrixPlan } from './subgroup-matrix.js';

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
  /** Of those, the A operands: staged transposed (K-major). */
  readonly transposed: ReadonlySet<number>;
  /** Set when dots lower to subgroup matrices (subgroup-matrix.ts) instead of the SIMT loop. */
  readonly matrix?: SubgroupMatrixPlan;
}

function walk(ops: readonly Op[], visit: (op: Op) => void): void {
  for (const op of ops) {
    visit(op);
    if (op.op === 'for') walk(op.body, visit);
  }
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
  const loads = new Map<number, Op>();
  walk(module.kernel.body, (op) => {
    if (op.op === 'load') loads.set(op.result.id, op);
    if (op.op === 'dot') {
      tile ??= op.result.type.shape;
      for (const operand of [op.a, op.b]) {
        if (!loads.has(operand.id)) unsupported(op, `the WGSL backend stages only loads as dot operands; %${operand.name} is not a load`, operand);
        shared.add(operand.id);
      }
      transposed.add(op.a.id);
      asB.add(op.b.id);
    }
    if (op.op === 'store') tile ??= op.value.type.shape;
    if (op.op === 'reduce') unsupported(op, 'the WGSL backend does not lower reduce yet', op.result);
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
  for (const id of transposed) {
    if (asB.has(id)) problems.push(error('codegen/unsupported', 'a staged load feeds one dot as A and another as B', { op: 'dot' }));
  }
  walk(module.kernel.body, (op) => {
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
  return problems.length > 0 ? { problems } : { layout: { threads, shared, transposed }, problems };
}
