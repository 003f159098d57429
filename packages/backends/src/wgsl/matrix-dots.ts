/**
 * Dots on subgroup matrices inside a SIMT kernel: the lowering for kernels whose tiles also go through
 * maps, reductions and casts (attention's online softmax), which the whole-kernel subgroup-matrix
 * path (subgroup-matrix.ts) cannot hold as matrices. Everything stays as the SIMT layout has it
 * (layout.ts: register tiles, staged loads, a register tile staged for a dot) except:
 *
 * - the staged operands lie row-major as the matrix loads read them: A as [BM][K], B as [K][BN] (a
 *   `transpose_b` B written transposed, so a plain row-major load reads Bᵀ), each row padded by
 *   MATRIX_DOT_PAD elements past a whole 16-byte word, so that the rows a matrix load reads fall in
 *   different banks;
 * - a dot multiplies them on subgroup matrices into `sh_dot`, an f32 [BM][BN] in workgroup memory,
 *   and every thread adds its register block of it to the accumulator: the product goes through
 *   workgroup memory once, and the softmax around it keeps the SIMT register layout;
 * - the workgroup is one-dimensional (Dawn requires x to be a multiple of the subgroup size), with
 *   the SIMT thread (tx, ty) read from the invocation index as @workgroup_size(TX, TY) numbers it.
 *
 * Subgroup s computes matrices s, s + SUBGROUPS, ... of the tile (row-major over M×N matrices); where
 * the tile has fewer matrices than a multiple of the subgroups, the extra subgroups compute one that
 * another subgroup also computes and store the same values, so no branch depends on the subgroup.
 * Offsets derive from `subgroup_id` and constants only: subgroup-uniform, as the builtins require.
 */
import { dtypeBytes, error, type Diagnostic, type Module, type Op, type TileValue } from '@syncopate/ir';
import type { KernelLayout } from './layout.js';
import type { SubgroupMatrixTarget } from './matmul-strategy.js';
import { emulatedMatrixOps, nativeMatrixOps, type MatrixOps } from './subgroup-matrix-ops.js';
import { DEFAULT_WORKGROUP_BYTES } from './subgroup-matrix.js';
import { wholeWords, type WgslWriter } from './writer.js';
import { walkOps } from './walk-ops.js';

/** Elements each staged row is padded by past a whole 16-byte word (16 bytes of f16: skews rows across banks). */
export const MATRIX_DOT_PAD = 8;

export interface MatrixDotPlan {
  readonly target: SubgroupMatrixTarget;
  readonly subgroupSize: number;
  /** Subgroups in the workgroup: the SIMT threads, TX·TY, over the subgroup size. */
  readonly subgroups: number;
  /** The products' [BM, BN] tile, the register tile. */
  readonly bm: number;
  readonly bn: number;
}

/** How a staged [rows, cols] tile lies: `lines` rows of `stride` elements (a transposed tile's lines are its columns). */
export function stagedLines(shape: readonly number[], transposed: boolean, dtype: string): { lines: number; length: number; stride: number } {
  const [r, c] = shape as [number, number];
  const [lines, length] = transposed ? [c, r] : [r, c];
  const perWord = 16 / dtypeBytes(dtype === 'f16' ? 'f16' : 'f32');
  return { lines, length, stride: wholeWords(length, perWord) + MATRIX_DOT_PAD };
}

/** The values staged in workgroup memory: staged loads and the register tiles a dot reads. */
function stagedValues(module: Module, simt: KernelLayout): TileValue[] {
  const staged = new Map<number, TileValue>();
  walkOps(module.kernel.body, (op) => {
    const defined = op.op === 'for' ? [...op.iterArgs, ...op.results] : 'result' in op && op.result.type.kind === 'tile' ? [op.result as TileValue] : [];
    for (const v of defined) if (simt.shared.has(v.id) || simt.registerOperands.has(v.id)) staged.set(v.id, v);
  });
  return [...staged.values()];
}

/**
 * The SIMT layout with its dots on subgroup matrices, or the problems that keep the kernel off them:
 * operand and result types the configuration does not take, a product tile that is not whole
 * matrices, a workgroup that is not whole subgroups, or too little workgroup memory.
 */
export function matrixDotLayout(module: Module, simt: KernelLayout, target: SubgroupMatrixTarget): { layout?: KernelLayout; problems: Diagnostic[] } {
  const problems: Diagnostic[] = [];
  const { config } = target;
  const { bm, bn, tx, ty } = simt.threads;
  const unsupported = (op: Op | undefined, why: string) =>
    problems.push(error('codegen/unsupported', `dots on subgroup matrices: ${why}`, { op: op?.op ?? 'kernel', ...(op?.loc ? { loc: op.loc } : {}) }));
  const transposed = new Set<number>();
  let dots = 0;
  walkOps(module.kernel.body, (op) => {
    if (op.op !== 'dot') return;
    dots++;
    if (op.transposeB) transposed.add(op.b.id);
    const [m, n] = op.result.type.shape as [number, number];
    const k = op.a.type.shape[1]!;
    if (op.a.type.dtype !== config.componentType || op.b.type.dtype !== config.componentType) {
      unsupported(op, `%${op.result.name}'s operands are ${op.a.type.dtype} and ${op.b.type.dtype}; the ${config.M}x${config.N}x${config.K} configuration takes ${config.componentType}`);
    }
    if (config.resultComponentType !== 'f32') unsupported(op, `the configuration accumulates in ${config.resultComponentType}; the kernel's registers in f32`);
    if (m !== bm || n !== bn) unsupported(op, `%${op.result.name} is [${m}, ${n}]; products are the [${bm}, ${bn}] register tile`);
    if (m % config.M !== 0 || n % config.N !== 0 || k % config.K !== 0) {
      unsupported(op, `%${op.result.name} is ${m}x${n}x${k}, not whole ${config.M}x${config.N}x${config.K} matrices`);
    }
  });
  if (dots === 0) unsupported(undefined, 'the kernel has no dot');
  const subgroupSize = target.subgroupSize ?? 32;
  const threads = tx * ty;
  if (threads % subgroupSize !== 0) unsupported(undefined, `the workgroup's ${threads} invocations are not whole subgroups of ${subgroupSize}`);
  const staged = stagedValues(module, simt).reduce((bytes, v) => {
    const { lines, stride } = stagedLines(v.type.shape, transposed.has(v.id), v.type.dtype);
    return bytes + lines * stride * dtypeBytes(v.type.dtype);
  }, 0);
  const bytes = staged + 4 * wholeWords(bm * bn, 4) + 4 * wholeWords(simt.reduceScratch, 4) + 64; // + the ticket and publish queue
  const budget = target.workgroupBytes ?? DEFAULT_WORKGROUP_BYTES;
  if (bytes > budget) unsupported(undefined, `the staged tiles, the product and the reductions' scratch need ${bytes} bytes of workgroup memory; the target allows ${budget}`);
  if (problems.length > 0) return { problems };
  const matrixDots: MatrixDotPlan = { target, subgroupSize, subgroups: threads / subgroupSize, bm, bn };
  return { layout: { ...simt, transposed, matrixDots }, problems };
}

/** The WGSL of the matrix dots; the kernel emitter calls it where the SIMT path would multiply. */
export class MatrixDotEmitter {
  private readonly ops: MatrixOps;

  constructor(
    private readonly w: WgslWriter,
    private readonly p: MatrixDotPlan,
  ) {
    this.ops = p.target.emulate ? emulatedMatrixOps(p.target.config) : nativeMatrixOps(p.target.config);
  }

  enables(): void {
    for (const line of this.ops.enables) this.w.line(line);
  }

  /** Extra parameters of `main`. */
  entryParams(): string {
    return this.ops.entryParams;
  }

  declarations(): void {
    const { p, w } = this;
    const { config } = p.target;
    const how = p.target.emulate ? ', emulated: every invocation holds whole matrices' : '';
    w.line(`// Dots on subgroup matrices ${config.M}x${config.N}x${config.K} (${config.componentType} -> ${config.resultComponentType}), ${p.subgroups} subgroups of ${p.subgroupSize}${how}.`);
    w.line(`const SUBGROUPS: u32 = ${p.subgroups}u;`);
    w.line(`var<workgroup> sh_dot: array<f32, ${wholeWords(p.bm * p.bn, 4)}>; // a dot's ${p.bm}x${p.bn} product, on its way into registers`);
  }

  /** `sg_id` where emulated (native: the entry parameter). */
  prologue(): void {
    this.ops.defineSubgroupId(this.w, this.p.subgroupSize);
  }

  /**
   * `sh_dot` = a·b over the staged `a` [BM][k] and `b` [k][BN] (row strides `strideA`, `strideB`),
   * between barriers: the previous product has been read out before, all of this one is there after.
   */
  product(a: string, strideA: number, b: string, strideB: number, k: number): void {
    const { p, w, ops } = this;
    const { M, N, K } = p.target.config;
    const count = (p.bm / M) * (p.bn / N);
    const across = p.bn / N;
    const rounds = Math.ceil(count / p.subgroups);
    w.line('workgroupBarrier(); // the last product is read out of sh_dot');
    w.block('', () => {
      w.line(`var ma: ${ops.type('left')};`);
      w.line(`var mb: ${ops.type('right')};`);
      for (let q = 0; q < rounds; q++) {
        const f = count % p.subgroups === 0 ? `sg_id + ${q * p.subgroups}u` : `(sg_id + ${q * p.subgroups}u) % ${count}u`;
        w.line(`let r${q} = (${f}) / ${across}u * ${M}u;`);
        w.line(`let c${q} = (${f}) % ${across}u * ${N}u;`);
        w.line(`var mc${q} = ${ops.type('result')}();`);
        // Unrolled: each step's offsets are constants past the subgroup's own.
        for (let kk = 0; kk < k; kk += K) {
          ops.load(w, 'ma', 'left', a, `r${q} * ${strideA}u + ${kk}u`, `${strideA}u`);
          ops.load(w, 'mb', 'right', b, `${kk * strideB}u + c${q}`, `${strideB}u`);
          ops.multiplyAccumulate(w, `mc${q}`, 'ma', 'mb');
        }
        ops.store(w, 'sh_dot', 'f32', `r${q} * ${p.bn}u + c${q}`, `mc${q}`, 'result', `${p.bn}u`);
      }
    });
    w.line('workgroupBarrier();');
  }
}
