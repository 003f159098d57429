/**
 * The subgroup-matrix lowering of the tile-level `dot` (tensor cores through Dawn's
 * `chromium_experimental_subgroup_matrix`). The A and B tiles are staged in workgroup memory exactly
 * as for SIMT (A K-major, zero outside the tensor, so edge tiles are padded), and a workgroup is
 * SM×SN subgroups, each owning FM×FN config-sized matrices of the [BM, BN] accumulator:
 *
 *   subgroup s owns rows (s / SN)·FM·M + [0, FM·M) and columns (s mod SN)·FN·N + [0, FN·N).
 *
 * The accumulator lives in `array<subgroup_matrix_result<…>, FM·FN>` from its zeros through the loop
 * to its store, which writes straight to the tensor when the whole tile is inside it and otherwise
 * goes through a small per-subgroup scratch in workgroup memory, element by element, masked.
 * Offsets to load and store are subgroup-uniform: they derive from the ticket (a workgroup-uniform
 * load), the read-only tables and `@builtin(subgroup_id)` (DESIGN.md, facts: the uniformity rule).
 */
import { error, type Diagnostic, type Module, type Op, type TileValue, type Value } from '@syncopate/ir';
import type { KernelLayout } from './layout.js';
import type { SubgroupMatrixTarget } from './matmul-strategy.js';
import type { WgslWriter } from './writer.js';

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
  /** Ids of the tile values held as subgroup matrices (dot results, their accumulators, loop-carried). */
  readonly matrices: ReadonlySet<number>;
}

function walk(ops: readonly Op[], visit: (op: Op) => void): void {
  for (const op of ops) {
    visit(op);
    if (op.op === 'for') walk(op.body, visit);
  }
}

/** The largest of 2 and 1 that divides `tiles`: a 2×2 grid of subgroups where the tile allows. */
function subgroupsAlong(tiles: number): number {
  return tiles % 2 === 0 ? 2 : 1;
}

/**
 * The layout for the subgroup-matrix path: the SIMT layout's staging, a one-dimensional workgroup of
 * SM·SN subgroups (Dawn requires x to be a multiple of the subgroup size), and the plan.
 */
export function subgroupMatrixLayout(module: Module, simt: KernelLayout, target: SubgroupMatrixTarget): { layout?: KernelLayout; problems: Diagnostic[] } {
  const problems: Diagnostic[] = [];
  const { config } = target;
  const unsupported = (op: Op, why: string, value?: Value) =>
    problems.push(error('codegen/unsupported', `subgroup-matrix target: ${why}`, { op: op.op, ...(value ? { value: value.name } : {}), ...(op.loc ? { loc: op.loc } : {}) }));
  const { bm, bn } = simt.threads;

  // The values held as matrices: every dot's result and accumulator, and what a loop carries of them.
  const matrices = new Set<number>();
  walk(module.kernel.body, (op) => {
    if (op.op !== 'dot') return;
    matrices.add(op.result.id);
    if (op.acc) matrices.add(op.acc.id);
  });
  for (let changed = true; changed; ) {
    changed = false;
    walk(module.kernel.body, (op) => {
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

  walk(module.kernel.body, (op) => {
    switch (op.op) {
      case 'dot': {
        const k = op.a.type.shape[1]!;
        if (op.a.type.dtype !== config.componentType || op.b.type.dtype !== config.componentType) {
          unsupported(op, `dot operands are ${op.a.type.dtype} and ${op.b.type.dtype}; the ${config.M}x${config.N}x${config.K} configuration takes ${config.componentType}`, op.result);
        }
        if (op.result.type.dtype !== config.resultComponentType) {
          unsupported(op, `the dot accumulates in ${op.result.type.dtype}; the configuration in ${config.resultComponentType}`, op.result);
        }
        if (k % config.K !== 0) unsupported(op, `the dot's K tile (${k}) is not a multiple of the configuration's K (${config.K})`, op.result);
        if (op.transposeB) unsupported(op, `transpose_b is not lowered yet (%${op.result.name})`, op.result);
        for (const v of [op.a, op.b]) {
          if (simt.registerOperands.has(v.id)) unsupported(op, `dot operands are staged from loads only; %${v.name} is not a load`, v);
        }
        return;
      }
      case 'reduce':
        unsupported(op, `reductions of tiles are not lowered yet (%${op.result.name})`, op.result);
        return;
      case 'store':
        if (matrices.has(op.value.id)) {
          const tensor = module.tensors.find((t) => t.name === op.tensor);
          if (tensor && tensor.dtype !== config.resultComponentType) {
            unsupported(op, `@${op.tensor} is ${tensor.dtype}; an accumulator is stored as ${config.resultComponentType}`, op.value);
          }
        } else if (op.value.type.kind === 'tile' && op.value.type.shape.length > 0) {
          unsupported(op, `only dot accumulators are stored from subgroup matrices; %${op.value.name} is not one`, op.value);
        }
        return;
      case 'constant':
        return;
      case 'map':
      case 'cast': {
        const operands: readonly TileValue[] = op.op === 'map' ? op.operands : [op.value];
        if (op.result.type.shape.length > 0 || operands.some((o) => matrices.has(o.id))) {
          unsupported(op, `elementwise ops on tiles are not lowered yet (%${op.result.name})`, op.result);
        }
        return;
      }
      default:
    }
  });
  if (bm % config.M !== 0 || bn % config.N !== 0) {
    problems.push(error('codegen/unsupported', `subgroup-matrix target: the tile [${bm}, ${bn}] is not a multiple of the configuration's ${config.M}x${config.N}`, { op: 'kernel' }));
  }
  if (problems.length > 0) return { problems };

  const [sm, sn] = target.subgroups ?? [subgroupsAlong(bm / config.M), subgroupsAlong(bn / config.N)];
  if ((bm / config.M) % sm !== 0 || (bn / config.N) % sn !== 0) {
    problems.push(error('codegen/unsupported', `subgroup-matrix target: ${sm}x${sn} subgroups do not divide the [${bm}, ${bn}] tile into ${config.M}x${config.N} matrices`, { op: 'kernel' }));
    return { problems };
  }
  const subgroupSize = target.subgroupSize ?? 32;
  const plan: SubgroupMatrixPlan = {
    target,
    m: config.M,
    n: config.N,
    k: config.K,
    sm,
    sn,
    fm: bm / config.M / sm,
    fn: bn / config.N / sn,
    subgroupSize,
    matrices,
  };
  // Register tiles are not used on this path: tm/tn of 1 and groups of 1 keep staging scalar.
  const threads = { bm, bn, tx: sm * sn * subgroupSize, ty: 1, tm: 1, tn: 1, gm: 1, gn: 1 };
  return { layout: { ...simt, threads, matrix: plan }, problems };
}

/** Text of the subgroup-matrix path; the kernel emitter calls it where the SIMT path would emit. */
export class SubgroupMatrixEmitter {
  constructor(
    private readonly w: WgslWriter,
    private readonly p: SubgroupMatrixPlan,
  ) {}

  private get result(): string {
    const { config } = this.p.target;
    return `subgroup_matrix_result<${config.resultComponentType}, ${this.p.n}, ${this.p.m}>`;
  }

  private get count(): number {
    return this.p.fm * this.p.fn;
  }

  enables(): void {
    this.w.line('enable subgroups;');
    this.w.line('enable chromium_experimental_subgroup_matrix;');
  }

  /** Module-scope constants and the store's scratch. */
  declarations(): void {
    const { p, w } = this;
    w.line(`// Subgroup matrices ${p.m}x${p.n}x${p.k} (${p.target.config.componentType} -> ${p.target.config.resultComponentType}): ${p.sm}x${p.sn} subgroups of ${p.subgroupSize}, each ${p.fm}x${p.fn} matrices.`);
    w.line(`const SG_N: u32 = ${p.sn}u;`);
    w.line(`const SUBGROUPS: u32 = ${p.sm * p.sn}u;`);
    w.line(`var<workgroup> sh_spill: array<${p.target.config.resultComponentType}, ${p.sm * p.sn * p.m * p.n}>; // a store's edge matrices, one per subgroup`);
  }

  /** The first row and column of the subgroup's part of the tile (subgroup-uniform). */
  prologue(): void {
    const { p, w } = this;
    w.line(`let sg_row = (sg_id / SG_N) * ${p.fm * p.m}u;`);
    w.line(`let sg_col = (sg_id % SG_N) * ${p.fn * p.n}u;`);
  }

  zeros(name: string, value: string): void {
    this.w.line(`var ${name}: array<${this.result}, ${this.count}>;`);
    if (value !== '0') this.w.line(`for (var f = 0u; f < ${this.count}u; f++) { ${name}[f] = ${this.result}(${value}); }`);
  }

  /** `acc += a·b` over the staged tiles: A K-major (`bm` rows), B row-major (`bn` columns). */
  dot(acc: string, sa: string, sb: string, bm: number, bn: number, k: number): void {
    const { p, w } = this;
    const ty = p.target.config.componentType;
    const left = `subgroup_matrix_left<${ty}, ${p.k}, ${p.m}>`;
    const right = `subgroup_matrix_right<${ty}, ${p.n}, ${p.k}>`;
    w.block(`for (var kk = 0u; kk < ${k}u; kk += ${p.k}u)`, () => {
      w.line(`var ma: array<${left}, ${p.fm}>;`);
      w.line(`var mb: array<${right}, ${p.fn}>;`);
      // Element (r, k) of A is at k·BM + r: column-major with stride BM.
      w.line(`for (var i = 0u; i < ${p.fm}u; i++) { ma[i] = subgroupMatrixLoad<${left}>(&${sa}, kk * ${bm}u + sg_row + i * ${p.m}u, true, ${bm}u); }`);
      w.line(`for (var j = 0u; j < ${p.fn}u; j++) { mb[j] = subgroupMatrixLoad<${right}>(&${sb}, kk * ${bn}u + sg_col + j * ${p.n}u, false, ${bn}u); }`);
      w.block(`for (var i = 0u; i < ${p.fm}u; i++)`, () =>
        w.line(`for (var j = 0u; j < ${p.fn}u; j++) { ${acc}[i * ${p.fn}u + j] = subgroupMatrixMultiplyAccumulate(ma[i], mb[j], ${acc}[i * ${p.fn}u + j]); }`),
      );
    });
  }

  /**
   * Stores the accumulator at (`row0`, `col0`) of a [rows, cols] tensor. `at(row, col)` is the element
   * index of the rank's copy; `bm`×`bn` the tile.
   */
  store(acc: string, ref: string, row0: string, col0: string, rows: number, cols: number, bm: number, bn: number, at: (row: string, col: string) => string): void {
    const { p, w } = this;
    w.line(`let row0 = ${row0};`);
    w.line(`let col0 = ${col0};`);
    // Workgroup-uniform (from the tables), so the edge path may use barriers.
    w.line(`let whole = row0 >= 0 && row0 + ${bm} <= ${rows} && col0 >= 0 && col0 + ${bn} <= ${cols};`);
    w.block('if (whole)', () => {
      w.block(`for (var i = 0u; i < ${p.fm}u; i++)`, () =>
        w.line(
          `for (var j = 0u; j < ${p.fn}u; j++) { subgroupMatrixStore(&${ref}, ${at(`row0 + i32(sg_row + i * ${p.m}u)`, `col0 + i32(sg_col + j * ${p.n}u)`)}, ${acc}[i * ${p.fn}u + j], false, ${cols}u); }`,
        ),
      );
    });
    w.block('if (!whole)', () => {
      // An edge tile: each subgroup parks one matrix at a time; the workgroup writes what is inside.
      const size = p.m * p.n;
      w.block(`for (var i = 0u; i < ${p.fm}u; i++)`, () =>
        w.block(`for (var j = 0u; j < ${p.fn}u; j++)`, () => {
          w.line('workgroupBarrier();');
          w.line(`subgroupMatrixStore(&sh_spill, sg_id * ${size}u, ${acc}[i * ${p.fn}u + j], false, ${p.n}u);`);
          w.line('workgroupBarrier();');
          w.block(`for (var e = lid; e < SUBGROUPS * ${size}u; e += WORKGROUP_SIZE)`, () => {
            w.line(`let s = e / ${size}u;`);
            w.line(`let row = row0 + i32((s / SG_N) * ${p.fm * p.m}u + i * ${p.m}u + (e % ${size}u) / ${p.n}u);`);
            w.line(`let col = col0 + i32((s % SG_N) * ${p.fn * p.n}u + j * ${p.n}u + e % ${p.n}u);`);
            w.line(`if (row >= 0 && row < ${rows} && col >= 0 && col < ${cols}) { ${ref}[${at('row', 'col')}] = sh_spill[e]; }`);
          });
        }),
      );
    });
  }
}
