/**
 * WGSL for one fused kernel: a device's ranks' tiles, in one dispatch per phase (one phase in all
 * when no chunk crosses devices; see placement/). Each workgroup takes a ticket, which names its
 * phase; a phase's first tickets count the tokens of chunk parts that are ready (at launch, or
 * because the host put their bytes in place), the rest run tiles, local ranks interleaved (ticket t →
 * local rank t mod L, position start + t div L of that rank's order). A workgroup only ever waits for
 * work of lower tickets, which has started, so the spin-waits make progress; every spin is bounded.
 */
import * as E from 'fp-ts/lib/Either.js';
import {
  error,
  printOp,
  type AffineExpr,
  type Diagnostic,
  type DType,
  type GatherOp,
  type LoadOp,
  type MapFn,
  type ReduceOp,
  type Module,
  type Op,
  type StoreOp,
  type TileValue,
  type Value,
} from '@syncopate/ir';
import { controlLayout } from '../control.js';
import type { FusedKernel, TensorBinding } from '../fused-kernel.js';
import { chunkTable, type ChunkTable, type PartShape } from '../gpu-signal/chunk-table.js';
import { withLineEdges } from '../gpu-signal/line-edges.js';
import { emitArrivePoint, emitLoopBits, emitSignalFunctions, emitTokenWorkgroups, emitWaitPoint, partsSeenDeclaration, remembersParts, type SignalContext } from '../gpu-signal/emit-signal.js';
import { barrierPoints, type BarrierPoint } from '../gpu-signal/barrier-table.js';
import { deviceView, singleDeviceView, type DeviceView } from '../placement/device-view.js';
import { chunkRoutes, PhaseError, planPhases, type PhasePlan } from '../placement/phases.js';
import { kernelTables, type KernelTables } from './tables.js';
import { affineToWgsl } from './affine.js';
import { kernelLayout, type KernelLayout, type ThreadLayout } from './layout.js';
import { identifier, wholeWords, WgslWriter } from './writer.js';
import { resolveTarget, type MatmulTarget } from './matmul-strategy.js';
import { stagedTile, SubgroupMatrixEmitter, subgroupMatrixLayout, vec4Views, type Vec4View } from './subgroup-matrix.js';
import { MatrixDotEmitter, matrixDotLayout, stagedLines } from './matrix-dots.js';
import { alwaysInside, alwaysMultipleOf, valueRanges, type ValueRange } from './static-bounds.js';
import { walkOps } from './walk-ops.js';

export interface CodegenOptions {
  /**
   * How dots lower (matmul-strategy.ts): 'simt' (the default), or subgroup matrices, by name (f16 →
   * f32 at 16×16×16) or with a configuration from `chooseMatmulStrategy`. Needs no adapter.
   */
  readonly target?: MatmulTarget;
  /** Iterations a spin-wait tries before it records a timeout (default 2^22). */
  readonly spinLimit?: number;
  /** Fault injection for tests: chunks (by name) that are never published, so their waits time out. */
  readonly unpublished?: readonly string[];
  /** About how many elements one workgroup moves per chunk part cut in rows (default PART_BYTES of them). */
  readonly partElements?: number;
  /**
   * How chunks that tiles store are cut into parts (gpu-signal/chunk-table.ts): `tiles` (default), a
   * part per storing tile, published by the last tile that writes it; `rows`, slices of about
   * `partElements` across the chunk's whole width, as every chunk that tiles do not store.
   */
  readonly partShape?: PartShape;
  /** How peer-copy chunks are put in phases (placement/phases.ts): `overlap` (default) or the `sequential` baseline. */
  readonly phasing?: 'overlap' | 'sequential';
  /** Per device, the process of an MPI job that runs it: chunks between processes go by mpi (placement/phases.ts). */
  readonly deviceProcess?: readonly number[];
  /**
   * Waits inside a loop whose guards name only its variable: rows per tile and iteration of the loop
   * (true, the default, where the loop's bounds are constants), or rows per tile whose entries keep
   * their loop condition, checked in the kernel (false). See gpu-signal/barrier-table.ts.
   */
  readonly loopRows?: boolean;
}

const UNARY: Record<string, (a: string, t: string) => string> = {
  neg: (a) => `-(${a})`,
  exp: (a) => `exp(${a})`,
  log: (a) => `log(${a})`,
  sqrt: (a) => `sqrt(${a})`,
  rsqrt: (a) => `inverseSqrt(${a})`,
  relu: (a, t) => `max(${a}, ${t}(0))`,
  silu: (a, t) => `(${a} / (${t}(1) + exp(-(${a}))))`,
  abs: (a) => `abs(${a})`,
};
const BINARY: Record<string, (a: string, b: string) => string> = {
  add: (a, b) => `(${a} + ${b})`,
  sub: (a, b) => `(${a} - ${b})`,
  mul: (a, b) => `(${a} * ${b})`,
  div: (a, b) => `(${a} / ${b})`,
  max: (a, b) => `max(${a}, ${b})`,
  min: (a, b) => `min(${a}, ${b})`,
};

function mapExpr(fn: MapFn, args: string[], t: string): string {
  return fn in UNARY ? UNARY[fn]!(args[0]!, t) : BINARY[fn]!(args[0]!, args[1]!);
}

const ZERO: AffineExpr = { constant: 0, terms: [] };

function countUses(ops: readonly Op[], uses = new Map<number, number>()): Map<number, number> {
  const use = (v: Value | undefined) => v && uses.set(v.id, (uses.get(v.id) ?? 0) + 1);
  for (const op of ops) {
    switch (op.op) {
      case 'store':
        use(op.value);
        break;
      case 'dot':
        [op.a, op.b, op.acc].forEach(use);
        break;
      case 'map':
        op.operands.forEach(use);
        break;
      case 'reduce':
      case 'cast':
        use(op.value);
        break;
      case 'gather':
        use(op.index);
        break;
      case 'for':
        op.inits.forEach(use);
        countUses(op.body, uses);
        break;
      case 'yield':
        op.values.forEach(use);
        break;
      default:
    }
  }
  return uses;
}

class KernelEmitter {
  private readonly w = new WgslWriter();
  private readonly names = new Map<number, string>();
  private readonly taken = new Set<string>();
  private readonly uses: Map<number, number>;
  private readonly t: ThreadLayout;
  private readonly tensors: Map<string, TensorBinding>;
  private readonly signal: SignalContext;
  /** Runs of waits and arrives, by their first op. */
  private readonly points: Map<Op, BarrierPoint>;
  /** The subgroup-matrix path, when the layout chose it. */
  private readonly sgm: SubgroupMatrixEmitter | undefined;
  /** A SIMT kernel's dots on subgroup matrices, when the layout chose it. */
  private readonly dots: MatrixDotEmitter | undefined;
  /** The values program ids and constant-bounded loop variables take (static-bounds.ts). */
  private readonly ranges: Map<number, ValueRange>;
  /** Loops around the op being emitted. */
  private loopDepth = 0;

  constructor(
    private readonly module: Module,
    private readonly layout: KernelLayout,
    private readonly table: ChunkTable,
    tensors: readonly TensorBinding[],
    private readonly view: DeviceView,
    private readonly tables: KernelTables,
    private readonly options: CodegenOptions,
    private readonly views: readonly Vec4View[] = [],
    points: readonly BarrierPoint[] = [],
  ) {
    this.uses = countUses(module.kernel.body);
    this.ranges = valueRanges(module);
    this.sgm = layout.matrix && new SubgroupMatrixEmitter(this.w, layout.matrix);
    this.dots = layout.matrixDots && new MatrixDotEmitter(this.w, layout.matrixDots);
    this.t = layout.threads;
    this.tensors = new Map(tensors.map((t) => [t.name, t]));
    this.points = new Map(points.map((p) => [p.ops[0]!, p]));
    this.signal = {
      module,
      table,
      chunksAt: tables.chunksAt,
      tensors: this.tensors,
      name: (id) => this.name(id),
      unpublished: new Set(options.unpublished ?? []),
      workgroupSize: this.t.tx * this.t.ty,
      points,
      pointsAt: tables.pointsAt,
      pointBitsAt: tables.pointBitsAt,
    };
  }

  private name(id: number, base?: string): string {
    const known = this.names.get(id);
    if (known) return known;
    let n = identifier('v_', base ?? String(id));
    if (this.taken.has(n)) n = `${n}_${id}`;
    this.taken.add(n);
    this.names.set(id, n);
    return n;
  }

  private alias(id: number, to: string): void {
    this.names.set(id, to);
  }

  private wgslType(d: DType): string {
    return d === 'f16' ? 'f16' : 'f32';
  }

  /** The register storage of a tile value: a scalar, a row, a column, or the thread's TM×TN block. */
  private regType(v: TileValue): string {
    const [r, c] = this.regDims(v);
    const n = r * c;
    return n === 1 && (v.type.shape.length === 0 || (v.type.shape[0] === 1 && v.type.shape[1] === 1))
      ? this.wgslType(v.type.dtype)
      : `array<${this.wgslType(v.type.dtype)}, ${n}>`;
  }

  private regDims(v: TileValue): [number, number] {
    const s = v.type.shape;
    if (s.length === 0) return [1, 1];
    return [s[0] === 1 ? 1 : this.t.tm, s[1] === 1 ? 1 : this.t.tn];
  }

  /** Element (i, j) of the thread's block of `v`; a dimension the thread holds once is index 0. */
  private elem(v: TileValue, i: string, j: string): string {
    const n = this.name(v.id);
    if (!this.regType(v).startsWith('array')) return n;
    const [r, c] = this.regDims(v);
    return `${n}[${r === 1 ? '0u' : i} * ${c}u + ${c === 1 ? '0u' : j}]`;
  }

  /** Loops over the thread's elements of `v`, with `i` and `j` the element indices. */
  private forElements(v: TileValue, body: (i: string, j: string) => void): void {
    const [r, c] = this.regDims(v);
    this.w.block(`for (var i = 0u; i < ${r}u; i++)`, () => this.w.block(`for (var j = 0u; j < ${c}u; j++)`, () => body('i', 'j')));
  }

  /** `substitute` renames values, e.g. the induction variable to the next iteration's. */
  private affine(e: AffineExpr, substitute?: ReadonlyMap<number, string>): string {
    return affineToWgsl(e, (id) => substitute?.get(id) ?? this.name(id));
  }

  /** Row and column (i32) of element (i, j) of the thread's block of a tile at `offsets`. */
  private coords(v: TileValue, offsets: readonly AffineExpr[], i: string, j: string): [string, string] {
    const [rows, cols] = v.type.shape.length === 0 ? [1, 1] : v.type.shape;
    // A dimension of size 1 is the same element for every thread (a broadcast row or column).
    const row = rows === 1 ? this.affine(offsets[0]!) : `${this.affine(offsets[0]!)} + i32(${this.owned(i, 'ty', this.t.ty, this.t.gm)})`;
    const col = cols === 1 ? this.affine(offsets[1]!) : `${this.affine(offsets[1]!)} + i32(${this.owned(j, 'tx', this.t.tx, this.t.gn)})`;
    return [row, col];
  }

  /** The row (column) of the tile that element `i` of the thread's block is: see layout.ts. */
  private owned(i: string, thread: string, threads: number, group: number): string {
    return group === 1 ? `${thread} + ${i} * ${threads}u` : `(${i} / ${group}u) * ${threads * group}u + ${thread} * ${group}u + ${i} % ${group}u`;
  }

  private inBounds(t: TensorBinding, row: string, col: string): string {
    return `${row} >= 0 && ${row} < ${t.shape[0]} && ${col} >= 0 && ${col} < ${t.shape[1]}`;
  }

  private at(t: TensorBinding, row: string, col: string): string {
    return `rank * ${t.elementsPerRank}u + u32(${row}) * ${t.shape[1]}u + u32(${col})`;
  }

  emit(): string {
    const w = this.w;
    this.header();
    emitSignalFunctions(w, this.signal, this.options.spinLimit ?? 1 << 22);
    // Matrix dots need whole subgroups along x: one dimension, (tx, ty) numbered as a TX×TY workgroup numbers them.
    w.line('@compute @workgroup_size(' + (this.dots ? `${this.t.tx * this.t.ty}` : `${this.t.tx}, ${this.t.ty}`) + ')');
    const subgroupId = this.sgm?.entryParams() ?? this.dots?.entryParams() ?? '';
    w.block(`fn main(@builtin(local_invocation_index) lid: u32, @builtin(local_invocation_id) local: vec3u${subgroupId})`, () => {
      w.line(this.dots ? `let tx = lid % ${this.t.tx}u;` : 'let tx = local.x;');
      w.line(this.dots ? `let ty = lid / ${this.t.tx}u;` : 'let ty = local.y;');
      this.sgm?.prologue();
      this.dots?.prologue();
      w.line('if (lid == 0u) { wg.u = atomicAdd(&ctl[0], 1u); }');
      w.line('let ticket = workgroupUniformLoad(&wg.u);');
      w.line('// Tickets run on across phases; find the last phase that starts at or before this one.');
      w.line('var phase = 0u;');
      w.line('loop { if (phase + 1u >= PHASES || ticket < tables[PHASES_AT + (phase + 1u) * PHASE_WORDS]) { break; } phase += 1u; }');
      w.line('let row = PHASES_AT + phase * PHASE_WORDS;');
      w.line('let local_ticket = ticket - tables[row];');
      w.line('let tokens = tables[row + 1u];');
      emitTokenWorkgroups(w);
      w.line('let t = local_ticket - tokens;');
      w.line('let local_rank = t % LOCAL_RANKS;');
      w.line('let position = t / LOCAL_RANKS;');
      w.line('if (position >= tables[row + 4u + 2u * local_rank]) { return; }');
      w.line('let rank = tables[LOCAL_RANKS_AT + local_rank];');
      w.line('let slot = ((rank * TILES) + tables[row + 3u + 2u * local_rank] + position) * GRID_RANK;');
      const points = [...this.points.values()];
      if (points.length > 0) w.line('let tile_row = local_rank * TILES + tables[row + 3u + 2u * local_rank] + position; // its rows of the wait and arrive tables');
      if (remembersParts(this.table) && points.some((p) => p.kind === 'wait' && p.inLoop)) w.line(partsSeenDeclaration(this.table.parts.length));
      this.block(this.module.kernel.body);
    });
    return w.toString();
  }

  private header(): void {
    const { module, t } = this;
    const w = this.w;
    w.line(`// Generated by syncopate: module @${module.name}, kernel @${module.kernel.name}`);
    const { view } = this;
    const where = view.ranks.length === module.ranks ? '' : `, device ${view.device}: ranks ${view.ranks.join(', ')}`;
    w.line(`// ${module.ranks} ranks x ${this.tilesPerRank()} tiles of ${t.bm}x${t.bn}, ${module.chunks.length} chunks${where}, ${view.phases.length} phase${view.phases.length === 1 ? '' : 's'}`);
    if ([...this.tensors.values()].some((x) => x.dtype === 'f16')) w.line('enable f16;');
    this.sgm?.enables();
    this.dots?.enables();
    w.line();
    w.line(`const RANKS: u32 = ${module.ranks}u;`);
    w.line(`const TILES: u32 = ${this.tilesPerRank()}u;`);
    w.line(`const GRID_RANK: u32 = ${module.kernel.grid.length}u;`);
    w.line(`const LOCAL_RANKS: u32 = ${view.ranks.length}u;`);
    w.line(`const LOCAL_RANKS_AT: u32 = ${this.tables.localRanksAt}u;`);
    w.line(`const PHASES: u32 = ${view.phases.length}u;`);
    w.line(`const PHASES_AT: u32 = ${this.tables.phasesAt}u;`);
    w.line(`const PHASE_WORDS: u32 = ${this.tables.phaseWords}u;`);
    w.line(`const WORKGROUP_SIZE: u32 = ${t.tx * t.ty}u;`);
    w.line();
    for (const x of this.tensors.values()) {
      w.line(`// @${x.name}: ${x.dtype}[${x.shape.join(', ')}], one copy per rank`);
      // A tensor with a vec4 view is only read: two bindings of one buffer must both be read-only.
      const access = this.views.some((v) => v.tensor === x.name) ? 'read' : 'read_write';
      w.line(`@group(0) @binding(${x.binding}) var<storage, ${access}> ${identifier('t_', x.name)}: array<${this.wgslType(x.dtype)}>;`);
    }
    const n = this.tensors.size;
    w.line(`@group(0) @binding(${n}) var<storage, read_write> ctl: array<atomic<u32>>;`);
    w.line(`// Each rank's tile order, this device's ranks and phases, then the chunk descriptors (wgsl/tables.ts).`);
    w.line(`@group(0) @binding(${n + 1}) var<storage, read> tables: array<u32>;`);
    for (const v of this.views) {
      w.line(`// @${v.tensor} again, as 16-byte words: the subgroup-matrix staging's wide loads`);
      w.line(`@group(0) @binding(${v.binding}) var<storage, read> ${identifier('v4_', v.tensor)}: array<vec4<u32>>;`);
    }
    w.line();
    // A struct of 16 bytes, not lone u32s: see wholeWords.
    w.line('// The workgroup\'s shared words: a ticket, part or flag handed from invocation 0 (u), the count of wg_pending.');
    w.line('struct WorkgroupWords { u: u32, pending_count: u32, unused: vec2<u32> }');
    w.line('var<workgroup> wg: WorkgroupWords;');
    this.sharedArrays();
    this.sgm?.declarations(this.matrixStores().some((op) => !this.wholeStore(op)));
    this.dots?.declarations();
    w.line();
  }

  /** The stores of subgroup-matrix accumulators. */
  private matrixStores(): StoreOp[] {
    const stores: StoreOp[] = [];
    walkOps(this.module.kernel.body, (op) => {
      if (op.op === 'store' && this.layout.matrix?.matrices.has(op.value.id)) stores.push(op);
    });
    return stores;
  }

  /** A store proved inside its tensor for every workgroup (static-bounds.ts): no edge path, no scratch. */
  private wholeStore(op: StoreOp): boolean {
    return alwaysInside(op.offsets, op.value.type.shape, this.tensors.get(op.tensor)!.shape, this.ranges);
  }

  private tilesPerRank(): number {
    return this.module.kernel.grid.reduce((a, b) => a * b, 1);
  }

  private sharedArrays(): void {
    const declare = (v: TileValue, from: string) => {
      const [r, c] = v.type.shape as [number, number];
      const ty = this.wgslType(v.type.dtype);
      const name = identifier('sh_', v.name);
      if (this.sgm) return this.sgm.sharedArray(name, r, c, ty);
      if (this.dots) {
        const { lines, length, stride } = stagedLines([r, c], this.layout.transposed.has(v.id), ty);
        return void this.w.line(`var<workgroup> ${name}: array<${ty}, ${wholeWords(lines * stride, ty === 'f16' ? 8 : 4)}>; // ${lines}x${length}${from}, rows padded to ${stride}, for matrix loads`);
      }
      const layout = `${r}x${c}${from}${this.layout.transposed.has(v.id) ? ', stored K-major' : ''}`;
      this.w.line(
        this.vectorised(v)
          ? `var<workgroup> ${name}: array<vec4<${ty}>, ${wholeWords((r * c) / 4, ty === 'f16' ? 2 : 1)}>; // ${layout}`
          : `var<workgroup> ${name}: array<${ty}, ${wholeWords(r * c, ty === 'f16' ? 8 : 4)}>; // ${layout}`,
      );
    };
    const visit = (ops: readonly Op[]) => {
      for (const op of ops) {
        if (op.op === 'load' && this.layout.shared.has(op.result.id)) declare(op.result, '');
        const defined = op.op === 'for' ? [...op.iterArgs, ...op.results] : 'result' in op && op.result.type.kind === 'tile' ? [op.result as TileValue] : [];
        for (const v of defined) if (this.layout.registerOperands.has(v.id)) declare(v, ' from registers');
        if (op.op === 'for') visit(op.body);
      }
    };
    visit(this.module.kernel.body);
    if (this.layout.reduceScratch > 0) {
      this.w.line(`var<workgroup> wg_reduce: array<f32, ${wholeWords(this.layout.reduceScratch, 4)}>; // partial results of reductions, one per (line, thread)`);
    }
  }

  private block(ops: readonly Op[]): void {
    ops.forEach((op, i) => {
      // A run of waits (or arrives) is one loop over the tile's row of a table, emitted at its first op.
      if (op.op === 'wait' || op.op === 'arrive') {
        const point = this.points.get(op);
        if (!point) return;
        const emit = point.kind === 'wait' ? emitWaitPoint : emitArrivePoint;
        return emit(this.w, this.signal, point, (k) => this.opComment(point.ops[k]!));
      }
      const sharedLoad = (o: Op | undefined) => o?.op === 'load' && this.layout.shared.has(o.result.id);
      this.opComment(op, sharedLoad(op) ? 'staged' : undefined);
      // Staged loads come in runs: one barrier before (the previous dot is done reading) and one after.
      if (sharedLoad(op) && !sharedLoad(ops[i - 1])) this.w.line('workgroupBarrier();');
      this.op(op);
      if (sharedLoad(op) && !sharedLoad(ops[i + 1])) this.w.line('workgroupBarrier();');
    });
  }

  /**
   * `// <the op as the IR prints it>  (note, loc L:C)` before the op's code, so WGSL reads back to the
   * IR. A `for` prints its header only (printing its body here too would make nested loops quadratic).
   * Any character WGSL takes for a line break (a quoted name may hold one) becomes a space, so the
   * comment stays one line.
   */
  private opComment(op: Op, note?: string): void {
    const text = op.op === 'for' ? printOp({ ...op, body: [] }).split('\n', 1)[0]!.replace(/ \{$/, '') : printOp(op);
    const about = [note, op.loc && `loc ${op.loc.line}:${op.loc.column}`].filter(Boolean).join(', ');
    this.w.line(`// ${text}${about ? `  (${about})` : ''}`.replace(/[\n\v\f\r\u0085\u2028\u2029]/g, ' '));
  }

  private op(op: Op): void {
    const w = this.w;
    switch (op.op) {
      case 'rank_id':
        w.line(`let ${this.name(op.result.id, op.result.name)} = i32(rank);`);
        return;
      case 'program_id':
        w.line(`let ${this.name(op.result.id, op.result.name)} = i32(tables[slot + ${op.axis}u]);`);
        return;
      case 'constant': {
        const n = this.name(op.result.id, op.result.name);
        const ty = this.wgslType(op.result.type.dtype);
        const value = Number.isFinite(op.value) ? `${ty}(${op.value})` : `${ty}(${op.value > 0 ? '1e30' : '-1e30'})`;
        if (this.sgm && this.layout.matrix!.matrices.has(op.result.id)) return this.sgm.zeros(n, op.value === 0 ? '0' : value);
        if (!this.regType(op.result).startsWith('array')) return void w.line(`var ${n}: ${ty} = ${value};`);
        // Inside a loop the zeros are written out: the declaration is not reliably zeroed again each iteration.
        w.line(this.loopDepth > 0 ? `var ${n} = ${this.regType(op.result)}();` : `var ${n}: ${this.regType(op.result)};`);
        if (op.value !== 0) this.forElements(op.result, (i, j) => w.line(`${this.elem(op.result, i, j)} = ${value};`));
        return;
      }
      case 'load':
        return this.layout.shared.has(op.result.id) ? this.sharedLoad(op) : this.registerLoad(op);
      case 'gather':
        return this.gather(op);
      case 'store': {
        const t = this.tensors.get(op.tensor)!;
        const ref = identifier('t_', t.name);
        if (this.sgm && this.layout.matrix!.matrices.has(op.value.id)) {
          const [rows, cols] = t.shape as [number, number];
          const [bm, bn] = op.value.type.shape as [number, number];
          const at = (row: string, col: string) => this.at(t, row, col);
          w.block('', () => this.sgm!.store(this.name(op.value.id), ref, this.affine(op.offsets[0]!), this.affine(op.offsets[1]!), rows, cols, bm, bn, at, this.wholeStore(op)));
          return;
        }
        this.forElements(op.value, (i, j) => {
          const [row, col] = this.coords(op.value, op.offsets, i, j);
          w.line(`let row = ${row};`);
          w.line(`let col = ${col};`);
          w.line(`if (${this.inBounds(t, 'row', 'col')}) { ${ref}[${this.at(t, 'row', 'col')}] = ${this.elem(op.value, i, j)}; }`);
        });
        return;
      }
      case 'dot':
        return this.dot(op.result, op.a, op.b, op.acc, op.transposeB === true);
      case 'map': {
        const n = this.name(op.result.id, op.result.name);
        const ty = this.wgslType(op.result.type.dtype);
        w.line(`var ${n}: ${this.regType(op.result)};`);
        this.forElements(op.result, (i, j) =>
          w.line(`${this.elem(op.result, i, j)} = ${mapExpr(op.fn, op.operands.map((o) => this.elem(o, i, j)), ty)};`),
        );
        return;
      }
      case 'cast': {
        const n = this.name(op.result.id, op.result.name);
        const ty = this.wgslType(op.result.type.dtype);
        w.line(`var ${n}: ${this.regType(op.result)};`);
        this.forElements(op.result, (i, j) => w.line(`${this.elem(op.result, i, j)} = ${ty}(${this.elem(op.value, i, j)});`));
        return;
      }
      case 'for':
        return this.loop(op);
      case 'yield':
        return; // the loop emitter assigns the carried values
      case 'wait':
      case 'arrive':
        return; // block() emits runs of them (barrier points)
      case 'reduce':
        return this.reduce(op);
    }
  }

  /**
   * `fn` over `axis` of a register tile: each thread combines its own elements along the axis, writes
   * the partial into `wg_reduce` at (line, its thread along the axis), and after a barrier every
   * thread combines the partials of the lines it holds. A line that every thread along the other
   * axis holds (a broadcast row or column) is written by the first of them only.
   */
  private reduce(op: ReduceOp): void {
    const w = this.w;
    const { value: x, result, axis, fn } = op;
    const n = this.name(result.id, result.name);
    const ty = this.wgslType(result.type.dtype);
    w.line(`var ${n}: ${this.regType(result)};`);
    const [rows, cols] = x.type.shape as [number, number];
    if ((axis === 1 ? cols : rows) === 1) {
      this.forElements(result, (i, j) => w.line(`${this.elem(result, i, j)} = ${this.elem(x, i, j)};`));
      return;
    }
    const combine = (a: string, b: string) => (fn === 'sum' ? `${a} + ${b}` : `${fn}(${a}, ${b})`);
    const { tm, tn, ty: threadsY, tx: threadsX, gm, gn } = this.t;
    // Along the reduced axis: the thread's elements and the threads that share a line; across it: the lines.
    const [own, threads, thread] = axis === 1 ? [tn, threadsX, 'tx'] : [tm, threadsY, 'ty'];
    const [lines, across] = axis === 1 ? [rows === 1 ? 1 : tm, rows] : [cols === 1 ? 1 : tn, cols];
    const line = (l: string) => (across === 1 ? '0u' : axis === 1 ? this.owned(l, 'ty', threadsY, gm) : this.owned(l, 'tx', threadsX, gn));
    const at = (l: string, k: string) => (axis === 1 ? this.elem(x, l, k) : this.elem(x, k, l));
    const writer = across === 1 ? (axis === 1 ? 'ty == 0u' : 'tx == 0u') : 'true';
    w.block('', () => {
      w.line('workgroupBarrier(); // the previous reduction is done reading wg_reduce');
      w.block(`for (var l = 0u; l < ${lines}u; l++)`, () => {
        w.line(`var part = f32(${at('l', '0u')});`);
        if (own > 1) w.line(`for (var k = 1u; k < ${own}u; k++) { part = ${combine('part', `f32(${at('l', 'k')})`)}; }`);
        w.line(`if (${writer}) { wg_reduce[(${line('l')}) * ${threads}u + ${thread}] = part; }`);
      });
      w.line('workgroupBarrier();');
      w.block(`for (var l = 0u; l < ${lines}u; l++)`, () => {
        w.line(`let base = (${line('l')}) * ${threads}u;`);
        w.line('var total = wg_reduce[base];');
        w.line(`for (var t = 1u; t < ${threads}u; t++) { total = ${combine('total', 'wg_reduce[base + t]')}; }`);
        w.line(`${axis === 1 ? this.elem(result, 'l', '0u') : this.elem(result, '0u', 'l')} = ${ty}(total);`);
      });
    });
  }

  /**
   * Copies a register tile that a dot reads into workgroup memory, where a staged load of its shape
   * would lie, between barriers (the previous dot is done reading; this one reads all of it).
   */
  private stageRegisters(v: TileValue): string {
    const w = this.w;
    const [, c] = v.type.shape as [number, number];
    w.line(`// %${v.name} from registers into workgroup memory, for the dot`);
    w.line('workgroupBarrier();');
    this.forElements(v, (i, j) => {
      w.line(`let e = (${this.owned(i, 'ty', this.t.ty, this.t.gm)}) * ${c}u + ${this.owned(j, 'tx', this.t.tx, this.t.gn)};`);
      w.line(`${this.stagedElement(v, 'e')} = ${this.elem(v, i, j)};`);
    });
    w.line('workgroupBarrier();');
    return identifier('sh_', v.name);
  }

  /** All threads copy the tile into workgroup memory; elements outside the tensor read as 0. */
  private sharedLoad(op: LoadOp): void {
    const w = this.w;
    this.alias(op.result.id, identifier('sh_', op.result.name));
    if (this.sgm) return this.sgm.stage(this.stagedTile(op));
    w.block(`for (var e = lid; e < ${this.elements(op)}u; e += WORKGROUP_SIZE)`, () => {
      this.readElement(op, 'x');
      w.line(`${this.stagedAt(op, 'e')} = x;`);
    });
  }

  private elements(op: LoadOp): number {
    return op.result.type.shape.reduce((a, b) => a * b, 1);
  }

  /** `var x` = element e of the load's tile from global memory (0 outside the tensor). */
  private readElement(op: LoadOp, x: string, substitute?: ReadonlyMap<number, string>): void {
    const t = this.tensors.get(op.tensor)!;
    const c = op.result.type.shape[1]!;
    // Consecutive invocations read consecutive columns of the tensor (coalesced).
    this.w.line(`let row = ${this.affine(op.offsets[0]!, substitute)} + i32(e / ${c}u);`);
    this.w.line(`let col = ${this.affine(op.offsets[1]!, substitute)} + i32(e % ${c}u);`);
    this.w.line(`var ${x} = ${this.wgslType(t.dtype)}(0);`);
    this.w.line(`if (${this.inBounds(t, 'row', 'col')}) { ${x} = ${identifier('t_', t.name)}[${this.at(t, 'row', 'col')}]; }`);
  }

  /** Where element e of a staged load lives in workgroup memory. */
  private stagedAt(op: LoadOp, e: string): string {
    return this.stagedElement(op.result, e);
  }

  /** Where element e (row-major) of a staged tile lives in workgroup memory. */
  private stagedElement(v: TileValue, e: string): string {
    const [r, c] = v.type.shape as [number, number];
    const sh = identifier('sh_', v.name);
    if (this.dots) {
      // Rows padded for matrix loads (matrix-dots.ts); a transposed tile's lines are its columns.
      const { stride } = stagedLines([r, c], this.layout.transposed.has(v.id), v.type.dtype);
      return this.layout.transposed.has(v.id) ? `${sh}[(${e} % ${c}u) * ${stride}u + ${e} / ${c}u]` : `${sh}[(${e} / ${c}u) * ${stride}u + ${e} % ${c}u]`;
    }
    const at = this.layout.transposed.has(v.id) ? `(${e} % ${c}u) * ${r}u + ${e} / ${c}u` : e;
    return this.vectorised(v) ? `${sh}[(${at}) / 4u][(${at}) % 4u]` : `${sh}[${at}]`;
  }

  private registerLoad(op: LoadOp): void {
    const t = this.tensors.get(op.tensor)!;
    const n = this.name(op.result.id, op.result.name);
    const w = this.w;
    w.line(`var ${n}: ${this.regType(op.result)};`);
    this.forElements(op.result, (i, j) => {
      const [row, col] = this.coords(op.result, op.offsets, i, j);
      w.line(`let row = ${row};`);
      w.line(`let col = ${col};`);
      w.line(`if (${this.inBounds(t, 'row', 'col')}) { ${this.elem(op.result, i, j)} = ${identifier('t_', t.name)}[${this.at(t, 'row', 'col')}]; }`);
    });
  }

  /**
   * Each thread reads its elements of the picked rows. An index is truncated and clamped into the
   * tensor's rows (NaN to row 0, where the adapter keeps NaNs: WGSL may assume there are none, and
   * then the bounds test below still keeps the read inside the tensor); columns outside read as 0.
   */
  private gather(op: GatherOp): void {
    const t = this.tensors.get(op.tensor)!;
    const n = this.name(op.result.id, op.result.name);
    const rows = t.shape[0]!;
    const w = this.w;
    w.line(`var ${n}: ${this.regType(op.result)};`);
    this.forElements(op.result, (i, j) => {
      const [, col] = this.coords(op.result, [ZERO, op.column], i, j);
      w.line(`let x = f32(${this.elem(op.index, i, j)});`);
      w.line(`let row = select(select(0, ${rows - 1}, x >= ${rows}.0), i32(x), x >= 0.0 && x < ${rows}.0);`);
      w.line(`let col = ${col};`);
      w.line(`if (${this.inBounds(t, 'row', 'col')}) { ${this.elem(op.result, i, j)} = ${identifier('t_', t.name)}[${this.at(t, 'row', 'col')}]; }`);
    });
  }

  /** `acc + a·b` (`a·bᵀ` with `transposeB`) from the staged tiles, each thread accumulating its TM×TN block in f32. */
  private dot(result: TileValue, a: TileValue, b: TileValue, acc: TileValue | undefined, transposeB = false): void {
    const w = this.w;
    const { tm, tn, ty, tx } = this.t;
    const k = a.type.shape[1]!;
    // A transposed B [N,K] is staged K-major, where a plain B [K,N] lies: row kk at kk·N either way.
    const bn = b.type.shape[transposeB ? 0 : 1]!;
    let n: string;
    if (acc && this.uses.get(acc.id) === 1) {
      n = this.name(acc.id);
      this.alias(result.id, n); // the accumulator is dead after this dot: accumulate in place
    } else {
      n = this.name(result.id, result.name);
      if (!acc && this.sgm) this.sgm.zeros(n, '0');
      // Zeros written out: a declaration inside a loop body is not reliably zeroed again each iteration.
      else w.line(acc ? `var ${n} = ${this.name(acc.id)};` : `var ${n} = array<f32, ${tm * tn}>();`);
    }
    const sa = this.layout.registerOperands.has(a.id) ? this.stageRegisters(a) : this.name(a.id);
    const sb = this.layout.registerOperands.has(b.id) ? this.stageRegisters(b) : this.name(b.id);
    const bm = a.type.shape[0]!;
    if (this.sgm) return this.sgm.dot(n, sa, sb, bm, bn, k);
    if (this.dots) {
      const stride = (v: TileValue) => stagedLines(v.type.shape, this.layout.transposed.has(v.id), v.type.dtype).stride;
      this.dots.product(sa, stride(a), sb, stride(b), k);
      this.forElements(result, (i, j) => w.line(`${this.elem(result, i, j)} += sh_dot[(${this.owned(i, 'ty', ty, this.t.gm)}) * ${bn}u + ${this.owned(j, 'tx', tx, this.t.gn)}];`));
      return;
    }
    w.block(`for (var kk = 0u; kk < ${k}u; kk++)`, () => {
      // A is K-major in workgroup memory: row r of step kk is at kk·BM + r; B's row kk at kk·BN.
      this.fragment('fa', sa, a, tm, `kk * ${bm}u`, 'ty', ty, this.t.gm);
      this.fragment('fb', sb, b, tn, `kk * ${bn}u`, 'tx', tx, this.t.gn);
      w.block(`for (var i = 0u; i < ${tm}u; i++)`, () =>
        w.line(`for (var j = 0u; j < ${tn}u; j++) { ${n}[i * ${tn}u + j] = fma(fa[i], fb[j], ${n}[i * ${tn}u + j]); }`),
      );
    });
  }

  /** The staged elements of `v` this thread multiplies at one K step, into `var name: array<f32, count>`. */
  private fragment(name: string, sh: string, v: TileValue, count: number, rowStart: string, thread: string, threads: number, group: number): void {
    const w = this.w;
    w.line(`var ${name}: array<f32, ${count}>;`);
    if (this.vectorised(v)) {
      w.block(`for (var g = 0u; g < ${count / 4}u; g++)`, () => {
        w.line(`let q = vec4<f32>(${sh}[(${rowStart} + g * ${threads * 4}u + ${thread} * 4u) / 4u]);`);
        w.line(`${name}[4u * g] = q.x; ${name}[4u * g + 1u] = q.y; ${name}[4u * g + 2u] = q.z; ${name}[4u * g + 3u] = q.w;`);
      });
    } else {
      w.line(`for (var i = 0u; i < ${count}u; i++) { ${name}[i] = f32(${sh}[${rowStart} + ${this.owned('i', thread, threads, group)}]); }`);
    }
  }

  /**
   * A staged operand read as vec4s: its thread groups (rows for A, columns for B) are 4 wide, and
   * the dimension the dot reads them along (the first when stored transposed) is a multiple of 4.
   */
  private vectorised(v: TileValue): boolean {
    const [r, c] = v.type.shape as [number, number];
    const group = this.layout.bOperands.has(v.id) ? this.t.gn : this.t.gm;
    return !this.dots && group === 4 && (this.layout.transposed.has(v.id) ? r : c) % 4 === 0;
  }

  private loop(op: Extract<Op, { op: 'for' }>): void {
    const w = this.w;
    op.iterArgs.forEach((arg, i) => {
      const n = this.name(arg.id, arg.name);
      w.line(`var ${n} = ${this.name(op.inits[i]!.id)};`);
      this.alias(op.results[i]!.id, n);
    });
    const iv = this.name(op.inductionVar.id, op.inductionVar.name);
    const staged = this.prefetchable(op);
    // Double buffering through registers: each iteration copies the tiles fetched during the previous
    // one into workgroup memory, then fetches the next iteration's while it computes.
    // The subgroup-matrix path double-buffers in workgroup memory instead (subgroup-matrix.ts).
    const next = new Map([[op.inductionVar.id, `(${iv} + ${op.step})`]]);
    // Where the bounds are constants: the first step's tiles at the lower bound, the next step's over the rest.
    const all = this.ranges.get(op.inductionVar.id);
    const firstRange = all && { ...all, last: all.first };
    const nextRange = all && { ...all, first: Math.min(all.first + op.step, all.last) };
    const sgmLoop = this.sgm && staged.length > 0 ? this.sgm.loopBefore(staged.map((l) => this.stagedTile(l, new Map([[op.inductionVar.id, this.affine(op.lower)]]), firstRange && [op.inductionVar.id, firstRange]))) : undefined;
    if (staged.length > 0 && sgmLoop === undefined) this.prefetch(staged, new Map([[op.inductionVar.id, this.affine(op.lower)]]));
    emitLoopBits(w, this.signal, op.inductionVar.id);
    w.block(`for (var ${iv}: i32 = ${this.affine(op.lower)}; ${iv} < ${this.affine(op.upper)}; ${iv} += ${op.step})`, () => {
      if (sgmLoop !== undefined) {
        staged.forEach((l) => this.alias(l.result.id, identifier('sh_', l.result.name)));
        const step = `u32((${iv} - ${this.affine(op.lower)}) / ${op.step})`;
        this.sgm!.loopStepStart(sgmLoop, step, `${iv} + ${op.step} < ${this.affine(op.upper)}`, staged.map((l) => this.stagedTile(l, next, nextRange && [op.inductionVar.id, nextRange])));
      } else if (staged.length > 0) {
        w.line('workgroupBarrier();');
        for (const load of staged) {
          this.opComment(load, 'staged, fetched ahead');
          this.alias(load.result.id, identifier('sh_', load.result.name));
          w.block(`for (var p = 0u; p < ${this.perThread(load)}u; p++)`, () => {
            w.line('let e = lid + p * WORKGROUP_SIZE;');
            w.line(`if (e < ${this.elements(load)}u) { ${this.stagedAt(load, 'e')} = ${identifier('pf_', load.result.name)}[p]; }`);
          });
        }
        w.line('workgroupBarrier();');
        w.block(`if (${iv} + ${op.step} < ${this.affine(op.upper)})`, () => this.prefetch(staged, new Map([[op.inductionVar.id, `(${iv} + ${op.step})`]]), false));
      }
      this.loopDepth++;
      this.block(op.body.slice(staged.length));
      this.loopDepth--;
      if (sgmLoop !== undefined) this.sgm!.loopStepEnd(sgmLoop, staged.map((l) => this.stagedTile(l, next, nextRange && [op.inductionVar.id, nextRange])));
      const y = op.body[op.body.length - 1];
      if (y?.op !== 'yield') return;
      y.values.forEach((v, i) => {
        const target = this.name(op.iterArgs[i]!.id);
        const source = this.name(v.id);
        if (source !== target) w.line(`${target} = ${source};`);
      });
    });
  }

  /**
   * A staged load for the subgroup-matrix emitter, its offsets renamed by `substitute`; `range`
   * narrows one loop variable's values (the step the tile is fetched for) in the proof that the
   * tile lies inside its tensor.
   */
  private stagedTile(load: LoadOp, substitute?: ReadonlyMap<number, string>, range?: readonly [number, ValueRange]) {
    const view = this.views.some((v) => v.tensor === load.tensor);
    const t = this.tensors.get(load.tensor)!;
    const ranges = range ? new Map([...this.ranges, range]) : this.ranges;
    const inside = alwaysInside(load.offsets, load.result.type.shape, t.shape, ranges, view ? 8 : 1);
    const aligned = view && alwaysMultipleOf(load.offsets[1]!, ranges, 8);
    return { ...stagedTile(load, t, this.layout, (e) => this.affine(e, substitute), view), ...(inside && { alwaysInside: true }), ...(aligned && { alwaysWordAligned: true }) };
  }

  /** The staged loads that open a loop body and index only with values from outside it (and its variable). */
  private prefetchable(op: Extract<Op, { op: 'for' }>): LoadOp[] {
    const inside = new Set<number>();
    const collect = (ops: readonly Op[]) =>
      ops.forEach((o) => {
        if ('result' in o) inside.add(o.result.id);
        if (o.op === 'for') {
          inside.add(o.inductionVar.id);
          o.iterArgs.forEach((v) => inside.add(v.id));
          o.results.forEach((v) => inside.add(v.id));
          collect(o.body);
        }
      });
    collect(op.body);
    const staged: LoadOp[] = [];
    for (const o of op.body) {
      if (o.op !== 'load' || !this.layout.shared.has(o.result.id)) break;
      if (o.offsets.some((e) => e.terms.some((t) => inside.has(t.value.id)))) break;
      staged.push(o);
    }
    return staged;
  }

  private perThread(load: LoadOp): number {
    return Math.ceil(this.elements(load) / (this.t.tx * this.t.ty));
  }

  /** Fetches the staged loads' elements this thread copies into `pf_*` registers (declaring them first). */
  private prefetch(staged: readonly LoadOp[], substitute: ReadonlyMap<number, string>, declare = true): void {
    const w = this.w;
    for (const load of staged) {
      const pf = identifier('pf_', load.result.name);
      this.opComment(load, 'prefetch into registers');
      if (declare) w.line(`var ${pf}: array<${this.wgslType(load.result.type.dtype)}, ${this.perThread(load)}>;`);
      w.block(`for (var p = 0u; p < ${this.perThread(load)}u; p++)`, () => {
        w.line('let e = lid + p * WORKGROUP_SIZE;');
        w.block(`if (e < ${this.elements(load)}u)`, () => {
          this.readElement(load, 'x', substitute);
          w.line(`${pf}[p] = x;`);
        });
      });
    }
  }
}

/**
 * The SIMT layout, or where the target asks for subgroup matrices: the whole-kernel matrix layout
 * built on it, else the SIMT layout with its dots on matrices (matrix-dots.ts).
 */
function matmulLayout(module: Module, target: MatmulTarget | undefined): { layout?: KernelLayout; problems: Diagnostic[] } {
  const simt = kernelLayout(module);
  const matrices = resolveTarget(target);
  if (!simt.layout || !matrices) return simt;
  const whole = subgroupMatrixLayout(module, simt.layout, matrices);
  if (whole.layout) return whole;
  // A kernel with maps or reductions around its dots (attention) keeps them SIMT, its dots on matrices.
  const dots = matrixDotLayout(module, simt.layout, matrices);
  return dots.layout ? dots : { problems: [...whole.problems, ...dots.problems] };
}

/** The tensors as bindings 0…n−1, in declaration order. */
function tensorBindings(module: Module): TensorBinding[] {
  return module.tensors.map((t, binding) => ({
    name: t.name,
    binding,
    dtype: t.dtype,
    shape: t.shape,
    elementsPerRank: t.shape.reduce((a, b) => a * b, 1),
  }));
}

function emitForView(module: Module, layout: KernelLayout, table: ChunkTable, view: DeviceView, options: CodegenOptions): FusedKernel {
  const tensors = tensorBindings(module);
  const points = barrierPoints(module, options.loopRows === false ? Infinity : view.ranks.length * module.kernel.grid.reduce((a, b) => a * b, 1));
  const tables = kernelTables(module, table, view, (name) => tensors.find((t) => t.name === name)!.binding, points);
  const views = vec4Views(module, layout, table, tensors, tensors.length + 2);
  const wgsl = new KernelEmitter(module, layout, table, tensors, view, tables, options, views, points).emit();
  return {
    wgsl,
    entryPoint: 'main',
    ranks: module.ranks,
    localRanks: view.ranks,
    tilesPerRank: module.kernel.grid.reduce((a, b) => a * b, 1),
    phases: tables.dispatches,
    workgroupSize: layout.matrixDots ? [layout.threads.tx * layout.threads.ty, 1] : [layout.threads.tx, layout.threads.ty],
    tensors,
    control: { binding: tensors.length, layout: controlLayout(table.parts.length, table.locks) },
    tables: { binding: tensors.length + 1, data: tables.data },
    ...(views.length > 0 && { views }),
    chunkNames: module.chunks.map((c) => c.value.name),
    chunkParts: table.entries.map((e) => e.parts),
    usesF16: tensors.some((t) => t.dtype === 'f16'),
  };
}

/** One kernel that runs every rank on one device (chunks forced to peer-copy become phase boundaries). */
export function emitFusedKernel(module: Module, options: CodegenOptions = {}): E.Either<readonly Diagnostic[], FusedKernel> {
  return E.map((p: PlacedKernels) => p.devices[0]!.kernel)(emitPlacedKernels(module, [], options));
}

/** A device's kernel with its phases: what the host launches, receives and sends around each. */
export interface DeviceKernel {
  readonly kernel: FusedKernel;
  readonly view: DeviceView;
}

export interface PlacedKernels {
  /** Rank → device. */
  readonly rankDevice: readonly number[];
  readonly devices: readonly DeviceKernel[];
  /** Undefined when every chunk stays on its device and none is forced to peer-copy. */
  readonly phases?: PhasePlan;
}

/**
 * One kernel per device for ranks placed by `rankDevice` (rank → device index; [] or all zeros for
 * one device). Chunks between devices go by peer-copy (the host moves them between phases); chunks
 * within a device by gpu-signal unless the plan forces peer-copy.
 */
export function emitPlacedKernels(module: Module, rankDevice: readonly number[], options: CodegenOptions = {}): E.Either<readonly Diagnostic[], PlacedKernels> {
  const { layout, problems } = matmulLayout(module, options.target);
  if (!layout) return E.left(problems);
  const placement = rankDevice.length === 0 ? Array<number>(module.ranks).fill(0) : rankDevice;
  if (placement.length !== module.ranks || placement.some((d) => !Number.isInteger(d) || d < 0)) {
    return E.left([error('placement/invalid', `rank placement [${placement.join(', ')}] must give a device index >= 0 for each of the ${module.ranks} ranks`, { op: 'module' })]);
  }
  const table = chunkTable(module, options.partElements, options.partShape);
  try {
    const routes = chunkRoutes(module, placement, options.deviceProcess);
    if (routes.every((r) => r === 'gpu-signal')) {
      const devices = Math.max(...placement) + 1;
      if (devices === 1) {
        const edged = withLineEdges(module, table);
        const view = singleDeviceView(module, edged);
        return E.right({ rankDevice: placement, devices: [{ kernel: emitForView(module, layout, edged, view, options), view }] });
      }
    }
    const phases = planPhases(module, placement, { ...(options.phasing && { phasing: options.phasing }), ...(options.deviceProcess && { deviceProcess: options.deviceProcess }) });
    const devices = Array.from({ length: Math.max(...placement) + 1 }, (_, d) => forView(deviceView(module, table, phases, placement, d)));
    return E.right({ rankDevice: placement, devices, phases });
  } catch (e) {
    if (e instanceof PhaseError) return E.left([error('placement/schedule', e.message, { op: 'chunk', ...(e.chunks[0] === undefined ? {} : { value: e.chunks[0] }) })]);
    throw e;
  }

  function forView(view: DeviceView): DeviceKernel {
    return { kernel: emitForView(module, layout!, table, view, options), view };
  }
}
