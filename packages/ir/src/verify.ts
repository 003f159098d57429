/**
 * The verifier: the module's declarations, SSA scoping and the type rules of every op. It reports every
 * problem it finds (it does not stop at the first), but never two for one cause: an op whose operand
 * is undefined or mistyped gets no further checks, so one bad value does not bury the real error.
 *
 * Each diagnostic names the op and, in `value`, the value that identifies it (its result; for `store`
 * the stored tile, for `wait`/`arrive` the chunk, for `for` the induction variable); the message names
 * the operands involved, so `formatDiagnostic` reads `dot %d: inner dimensions differ: %a is 64x32, ...`.
 *
 * Codes: verify/module, verify/order, verify/chunk, verify/unknown-tensor, verify/unknown-op,
 * verify/undefined-value, verify/redefined-value, verify/type, verify/shape, verify/dtype, verify/rank,
 * verify/program-id, verify/loop, verify/yield.
 */
import { error, type Diagnostic } from './diagnostics.js';
import { formatBox } from './box.js';
import { validateOrder } from './scheduler.js';
import { broadcastShapes, formatShape, shapesEqual } from './shapes.js';
import {
  BINARY_FNS,
  CHUNK_KINDS,
  COMM_BACKENDS,
  DTYPES,
  REDUCE_FNS,
  UNARY_FNS,
  type AffineExpr,
  type AffineRange,
  type ArriveOp,
  type CastOp,
  type ChunkDecl,
  type ConstantOp,
  type DotOp,
  type ForOp,
  type GatherOp,
  type LoadOp,
  type MapFn,
  type MapOp,
  type Module,
  type Op,
  type OpName,
  type ProgramIdOp,
  type RankIdOp,
  type ReduceOp,
  type Shape,
  type SourceLoc,
  type StoreOp,
  type TensorDecl,
  type TileType,
  type TileValue,
  type Type,
  type Value,
  type WaitOp,
  type YieldOp,
} from './types.js';

export function verify(m: Module): Diagnostic[] {
  const ctx = new Context(m);
  checkModuleHeader(ctx, m);
  for (const t of m.tensors) checkTensor(ctx, t);
  checkGrid(ctx, m);
  for (const c of m.chunks) checkChunk(ctx, c);
  checkBlock(ctx, m.kernel.body);
  return ctx.diagnostics;
}

// ---------------------------------------------------------------------------------------------------
// Context: diagnostics, declarations and the SSA scopes.

/** What a diagnostic points at. */
interface Site {
  readonly op: NonNullable<Diagnostic['op']>;
  readonly value?: string;
  readonly loc?: SourceLoc;
}

function siteOf(op: Op, value?: Value): Site {
  if (value && op.loc) return { op: op.op, value: value.name, loc: op.loc };
  if (value) return { op: op.op, value: value.name };
  return op.loc ? { op: op.op, loc: op.loc } : { op: op.op };
}

type Kind = Type['kind'];

/** One block's values; `loop` is the induction variable's name of the loop whose body it is. */
interface Scope {
  readonly values: Map<number, Value>;
  readonly loop?: string;
}

class Context {
  readonly diagnostics: Diagnostic[] = [];
  readonly tensors = new Map<string, TensorDecl>();
  /** Every value defined so far, by id and by name, with the op that defined it. */
  private readonly byId = new Map<number, { value: Value; by: string }>();
  private readonly byName = new Map<string, Value>();
  /** Values of loop bodies already closed: id -> the loop's induction variable. */
  private readonly closed = new Map<number, string>();
  /** Every id the kernel defines anywhere, so a use before its definition can say so. */
  private readonly kernelIds: ReadonlySet<number>;
  /** Innermost last; the first holds the chunk values and the kernel's top level. */
  private readonly scopes: Scope[] = [{ values: new Map() }];

  constructor(readonly module: Module) {
    this.kernelIds = new Set(collectDefinitions(module.kernel.body).map((v) => v.id));
  }

  get loopDepth(): number {
    return this.scopes.length - 1;
  }

  report(code: string, site: Site, message: string): void {
    this.diagnostics.push(error(code, message, site));
  }

  /** The tensor `@name`, reporting it when undeclared. */
  tensor(name: string, site: Site): TensorDecl | undefined {
    const t = this.tensors.get(name);
    if (t === undefined) this.report('verify/unknown-tensor', site, `@${name} is not a tensor of the module`);
    return t;
  }

  enterLoop(inductionVar: string): void {
    this.scopes.push({ values: new Map(), loop: inductionVar });
  }

  leaveLoop(): void {
    const scope = this.scopes.pop();
    for (const id of scope?.values.keys() ?? []) this.closed.set(id, scope?.loop ?? '?');
  }

  /**
   * Defines `v` in the innermost scope; reports a redefinition, a value of the wrong kind or an
   * ill-formed tile type. Returns whether `v` is well-formed and of `kind` (so the op can be checked).
   */
  define(v: Value, kind: Kind, site: Site): boolean {
    const earlier = this.byId.get(v.id);
    if (earlier !== undefined) {
      const also = earlier.value.name === v.name ? '' : ` (as %${earlier.value.name})`;
      this.report('verify/redefined-value', site, `%${v.name} is defined twice: value id ${v.id} is already defined${also} by ${earlier.by}`);
    } else {
      const sameName = this.byName.get(v.name);
      if (sameName !== undefined) {
        this.report('verify/redefined-value', site, `the name %${v.name} is already taken by another value (id ${sameName.id})`);
      }
      this.byId.set(v.id, { value: v, by: site.op });
      this.byName.set(v.name, v);
    }
    this.scopes[this.scopes.length - 1]!.values.set(v.id, v);
    if (v.type.kind !== kind) {
      this.report('verify/type', site, `%${v.name} must be ${article(kind)}, but is declared ${formatType(v.type)}`);
      return false;
    }
    return v.type.kind !== 'tile' || this.tileTypeWellFormed(v as TileValue, site);
  }

  private tileTypeWellFormed(v: TileValue, site: Site): boolean {
    let ok = true;
    if (!v.type.shape.every(isPositiveInteger)) {
      this.report('verify/shape', site, `%${v.name} has shape ${formatShape(v.type.shape)}; tile dimensions must be positive integers`);
      ok = false;
    }
    if (!DTYPES.includes(v.type.dtype)) {
      this.report('verify/dtype', site, `%${v.name} has unknown dtype '${v.type.dtype}' (expected ${DTYPES.join(' or ')})`);
      ok = false;
    }
    return ok;
  }

  /** Checks a use of `v` where `kind` is needed; reports and returns false when it cannot be used. */
  use(v: Value, kind: Kind, site: Site): boolean {
    const def = this.visible(v.id);
    if (def === undefined) {
      this.report('verify/undefined-value', site, this.whyInvisible(v, kind));
      return false;
    }
    if (!typesEqual(v.type, def.type)) {
      this.report('verify/type', site, `%${v.name} is used as ${formatType(v.type)} but defined as ${formatType(def.type)}`);
      return false;
    }
    if (def.type.kind !== kind) {
      this.report('verify/type', site, `${site.op} needs ${article(kind)} here, but %${v.name} is ${article(def.type.kind)}`);
      return false;
    }
    return true;
  }

  // The verifier runs after every pass, over every op: the loops below allocate nothing.

  /** Uses every value (reporting each problem); true when all can be used. */
  useAll(vs: readonly Value[], kind: Kind, site: Site): boolean {
    let ok = true;
    for (let i = 0; i < vs.length; i++) if (!this.use(vs[i]!, kind, site)) ok = false;
    return ok;
  }

  /** Uses every value the expressions' terms name, as index values. */
  useAffine(exprs: readonly AffineExpr[], site: Site): boolean {
    let ok = true;
    for (let i = 0; i < exprs.length; i++) {
      const terms = exprs[i]!.terms;
      for (let j = 0; j < terms.length; j++) if (!this.use(terms[j]!.value, 'index', site)) ok = false;
    }
    return ok;
  }

  /** `useAffine` over a guard's expressions. */
  useGuard(guard: readonly AffineRange[] | undefined, site: Site): boolean {
    let ok = true;
    for (let i = 0; i < (guard?.length ?? 0); i++) {
      const terms = guard![i]!.expr.terms;
      for (let j = 0; j < terms.length; j++) if (!this.use(terms[j]!.value, 'index', site)) ok = false;
    }
    return ok;
  }

  private visible(id: number): Value | undefined {
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const v = this.scopes[i]!.values.get(id);
      if (v !== undefined) return v;
    }
    return undefined;
  }

  private whyInvisible(v: Value, kind: Kind): string {
    const loop = this.closed.get(v.id);
    if (loop === v.name) return `%${v.name} is the induction variable of its loop and is not visible outside it`;
    if (loop !== undefined) return `%${v.name} is defined inside the loop over %${loop} and is not visible outside it`;
    if (this.kernelIds.has(v.id)) return `%${v.name} is used before it is defined`;
    if (kind === 'chunk') return `%${v.name} is not a chunk declared by the module`;
    return `%${v.name} is not defined`;
  }
}

/** Every value an op list defines, loop bodies included. */
function collectDefinitions(ops: readonly Op[]): Value[] {
  return ops.flatMap((op): Value[] => {
    switch (op.op) {
      case 'for':
        return [op.inductionVar, ...op.iterArgs, ...collectDefinitions(op.body), ...op.results];
      case 'store':
      case 'yield':
      case 'wait':
      case 'arrive':
        return [];
      default:
        return 'result' in op ? [op.result] : [];
    }
  });
}

// ---------------------------------------------------------------------------------------------------
// Declarations: ranks, tensors, grid and scheduler, chunks.

function checkModuleHeader(ctx: Context, m: Module): void {
  if (!Number.isInteger(m.ranks) || m.ranks < 1) {
    ctx.report('verify/module', { op: 'module' }, `@${m.name} has ${m.ranks} ranks; ranks must be an integer >= 1`);
  }
}

function checkTensor(ctx: Context, t: TensorDecl): void {
  const site: Site = { op: 'tensor' };
  if (ctx.tensors.has(t.name)) ctx.report('verify/module', site, `tensor @${t.name} is declared twice`);
  else ctx.tensors.set(t.name, t);
  if (!t.shape.every(isPositiveInteger)) {
    ctx.report('verify/module', site, `tensor @${t.name} has shape ${formatShape(t.shape)}; dimensions must be positive integers`);
  }
  if (!DTYPES.includes(t.dtype)) {
    ctx.report('verify/dtype', site, `tensor @${t.name} has unknown dtype '${t.dtype}' (expected ${DTYPES.join(' or ')})`);
  }
  const d = t.distribution;
  if (d.kind === 'sharded' && !isIndexBelow(d.axis, t.shape.length)) {
    ctx.report('verify/module', site, `tensor @${t.name} is sharded on axis ${d.axis}, but has rank ${t.shape.length}`);
  }
}

function checkGrid(ctx: Context, m: Module): void {
  const { grid, scheduler } = m.kernel;
  const site: Site = { op: 'kernel' };
  const text = `[${grid.join(', ')}]`;
  if (grid.length < 1 || grid.length > 3) {
    ctx.report('verify/module', site, `grid ${text} has ${grid.length} axes; a grid has 1 to 3`);
    return;
  }
  const badAxis = grid.findIndex((d) => !isPositiveInteger(d));
  if (badAxis >= 0) {
    ctx.report('verify/module', site, `grid ${text} has ${grid[badAxis]} tiles on axis ${badAxis}; each axis needs a positive integer`);
    return;
  }
  const problem = validateOrder(scheduler.order, grid, m.ranks);
  if (problem !== undefined) ctx.report('verify/order', site, `the tile scheduler's order is invalid: ${problem}`);
}

function checkChunk(ctx: Context, c: ChunkDecl): void {
  const site: Site = { op: 'chunk', value: c.value.name };
  ctx.define(c.value, 'chunk', site);
  const bad = (message: string) => ctx.report('verify/chunk', site, message);
  const t = ctx.tensors.get(c.tensor);
  if (t === undefined) ctx.report('verify/unknown-tensor', site, `chunk moves a region of @${c.tensor}, which is not a tensor of the module`);
  else checkChunkRegion(c, t, bad);
  const { ranks } = ctx.module;
  if (!isIndexBelow(c.src, ranks)) bad(`source rank ${c.src} is not a rank in [0, ${ranks})`);
  if (!isIndexBelow(c.dst, ranks)) bad(`destination rank ${c.dst} is not a rank in [0, ${ranks})`);
  if (c.src === c.dst) bad(`source and destination are both rank ${c.src}`);
  if (!Number.isInteger(c.step) || c.step < 0) bad(`step ${c.step} must be an integer >= 0`);
  if (!CHUNK_KINDS.includes(c.kind)) bad(`unknown chunk kind '${c.kind}' (expected ${CHUNK_KINDS.join(' or ')})`);
  if (!COMM_BACKENDS.includes(c.backend)) bad(`unknown backend '${c.backend}' (expected ${COMM_BACKENDS.join(', ')})`);
}

function checkChunkRegion(c: ChunkDecl, t: TensorDecl, bad: (message: string) => void): void {
  const { lo, hi } = c.region;
  const rank = t.shape.length;
  if (lo.length !== rank || hi.length !== rank) {
    bad(`region ${formatBox(c.region)} has rank ${Math.max(lo.length, hi.length)}, but @${t.name} has rank ${rank}`);
    return;
  }
  for (let axis = 0; axis < rank; axis++) {
    const l = lo[axis]!;
    const h = hi[axis]!;
    const dim = t.shape[axis]!;
    if (!Number.isInteger(l) || !Number.isInteger(h) || l < 0 || l >= h || h > dim) {
      bad(`region ${formatBox(c.region)} of @${t.name} (${formatShape(t.shape)}): axis ${axis} range ${l}:${h} must satisfy 0 <= lo < hi <= ${dim} with integers`);
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Ops: one checker per op. Each uses its operands first, defines its results, and checks the op's
// own rules only when every operand and result is sound.

type Checker<K extends OpName> = (ctx: Context, op: Extract<Op, { op: K }>) => void;

const CHECKERS: { readonly [K in OpName]: Checker<K> } = {
  rank_id: checkRankId,
  program_id: checkProgramId,
  constant: checkConstant,
  load: checkLoad,
  gather: checkGather,
  store: checkStore,
  dot: checkDot,
  map: checkMap,
  reduce: checkReduce,
  cast: checkCast,
  for: checkFor,
  yield: checkStrayYield,
  wait: checkSync,
  arrive: checkSync,
};

function checkBlock(ctx: Context, ops: readonly Op[]): void {
  for (const op of ops) {
    const check = CHECKERS[op.op] as Checker<OpName> | undefined;
    if (check === undefined) {
      ctx.report('verify/unknown-op', { op: 'kernel', ...(op.loc ? { loc: op.loc } : {}) }, `unknown op '${String(op.op)}'`);
    } else {
      check(ctx, op as never);
    }
  }
}

function checkRankId(ctx: Context, op: RankIdOp): void {
  ctx.define(op.result, 'index', siteOf(op, op.result));
}

function checkProgramId(ctx: Context, op: ProgramIdOp): void {
  const site = siteOf(op, op.result);
  ctx.define(op.result, 'index', site);
  const { grid } = ctx.module.kernel;
  if (!isIndexBelow(op.axis, grid.length)) {
    ctx.report('verify/program-id', site, `axis ${op.axis} is not an axis of the ${grid.length}-D grid [${grid.join(', ')}]`);
  }
}

function checkConstant(ctx: Context, op: ConstantOp): void {
  const site = siteOf(op, op.result);
  ctx.define(op.result, 'tile', site);
  if (typeof op.value !== 'number') ctx.report('verify/type', site, `the constant ${String(op.value)} is not a number`);
}

function checkLoad(ctx: Context, op: LoadOp): void {
  const site = siteOf(op, op.result);
  const operandsOk = ctx.useAffine(op.offsets, site);
  const resultOk = ctx.define(op.result, 'tile', site);
  const t = ctx.tensor(op.tensor, site);
  if (!operandsOk || !resultOk || t === undefined) return;
  checkAccess(ctx, site, t, op.offsets, op.result);
  if (op.result.type.dtype !== t.dtype) {
    ctx.report('verify/dtype', site, `@${t.name} holds ${t.dtype}, but %${op.result.name} is ${op.result.type.dtype}; a load keeps the tensor's dtype`);
  }
}

/**
 * A gather reads a 2-D tensor; its index is an f32 tile [BM] or [BM, 1]; its result is [BM, BN] in
 * the tensor's dtype.
 */
function checkGather(ctx: Context, op: GatherOp): void {
  const site = siteOf(op, op.result);
  const operandsOk = [ctx.use(op.index, 'tile', site), ctx.useAffine([op.column], site)].every(Boolean);
  const resultOk = ctx.define(op.result, 'tile', site);
  const t = ctx.tensor(op.tensor, site);
  if (!operandsOk || !resultOk || t === undefined) return;
  const { index, result } = op;
  if (t.shape.length !== 2) ctx.report('verify/rank', site, `gather reads rows of a 2-D tensor, but @${t.name} has rank ${t.shape.length}`);
  const rows = index.type.shape[0];
  const isColumn = index.type.shape.length === 1 || (index.type.shape.length === 2 && index.type.shape[1] === 1);
  if (!isColumn) {
    ctx.report('verify/shape', site, `the index %${index.name} is ${describeShape(index.type.shape)}; a gather's index is [BM] or [BM, 1]`);
  } else if (result.type.shape.length !== 2 || result.type.shape[0] !== rows) {
    ctx.report('verify/shape', site, `%${result.name} is ${formatShape(result.type.shape)}, but the index %${index.name} picks ${rows} rows: the result is [${rows}, BN]`);
  }
  if (index.type.dtype !== 'f32') {
    ctx.report('verify/dtype', site, `the index %${index.name} is ${index.type.dtype}; gather indices are f32 (integers up to 2^24 are exact)`);
  }
  if (result.type.dtype !== t.dtype) {
    ctx.report('verify/dtype', site, `@${t.name} holds ${t.dtype}, but %${result.name} is ${result.type.dtype}; a gather keeps the tensor's dtype`);
  }
}

function checkStore(ctx: Context, op: StoreOp): void {
  const site = siteOf(op, op.value);
  const operandsOk = [ctx.use(op.value, 'tile', site), ctx.useAffine(op.offsets, site)].every(Boolean);
  const t = ctx.tensor(op.tensor, site);
  if (!operandsOk || t === undefined) return;
  checkAccess(ctx, site, t, op.offsets, op.value);
  if (op.value.type.dtype !== t.dtype) {
    ctx.report('verify/dtype', site, `%${op.value.name} is ${op.value.type.dtype}, but @${t.name} holds ${t.dtype}; cast it first`);
  }
}

/** A load's or store's offsets and tile must both have the tensor's rank. */
function checkAccess(ctx: Context, site: Site, t: TensorDecl, offsets: readonly AffineExpr[], tile: TileValue): void {
  const rank = t.shape.length;
  if (offsets.length !== rank) {
    ctx.report('verify/rank', site, `@${t.name} has rank ${rank}, but ${offsets.length} offset${offsets.length === 1 ? ' is' : 's are'} given`);
  }
  if (tile.type.shape.length !== rank) {
    ctx.report('verify/rank', site, `%${tile.name} is ${describeShape(tile.type.shape)}, but @${t.name} has rank ${rank}`);
  }
}

function checkDot(ctx: Context, op: DotOp): void {
  const site = siteOf(op, op.result);
  const operands = op.acc ? [op.a, op.b, op.acc] : [op.a, op.b];
  const operandsOk = ctx.useAll(operands, 'tile', site);
  const resultOk = ctx.define(op.result, 'tile', site);
  if (!operandsOk || !resultOk) return;
  const { a, b, acc, result } = op;
  const notMatrices = [a, b].filter((v) => v.type.shape.length !== 2);
  for (const v of notMatrices) ctx.report('verify/rank', site, `%${v.name} must be a 2-D tile, but is ${describeShape(v.type.shape)}`);
  if (notMatrices.length > 0) return;
  const [m, k] = a.type.shape as readonly [number, number];
  // With transpose_b, b is [N,K]: its rows are the product's columns.
  const [k2, n] = (op.transposeB ? [...b.type.shape].reverse() : b.type.shape) as readonly [number, number];
  if (op.transposeB !== undefined && typeof op.transposeB !== 'boolean') {
    ctx.report('verify/type', site, `transposeB must be true or false, but is ${String(op.transposeB)}`);
  }
  if (k !== k2) {
    const bShape = op.transposeB ? `${n}x${k2} (used transposed, transpose_b)` : `${k2}x${n}`;
    ctx.report('verify/shape', site, `inner dimensions differ: %${a.name} is ${m}x${k}, %${b.name} is ${bShape}`);
  }
  if (a.type.dtype !== b.type.dtype) {
    ctx.report('verify/dtype', site, `operands have different dtypes: %${a.name} is ${a.type.dtype}, %${b.name} is ${b.type.dtype}`);
  }
  const product = `%${a.name}·%${b.name}${op.transposeB ? 'ᵀ' : ''} is ${m}x${n}`;
  if (acc) checkF32Matrix(ctx, site, acc, [m, n], `the accumulator %${acc.name}`, product);
  checkF32Matrix(ctx, site, result, [m, n], `the result %${result.name}`, product);
}

/** A dot's accumulator and result: `[m, n]`, f32. */
function checkF32Matrix(ctx: Context, site: Site, v: TileValue, shape: Shape, what: string, product: string): void {
  if (!shapesEqual(v.type.shape, shape)) ctx.report('verify/shape', site, `${what} is ${formatShape(v.type.shape)}, but ${product}`);
  if (v.type.dtype !== 'f32') ctx.report('verify/dtype', site, `${what} is ${v.type.dtype}; dot accumulates in f32`);
}

function checkMap(ctx: Context, op: MapOp): void {
  const site = siteOf(op, op.result);
  const operandsOk = ctx.useAll(op.operands, 'tile', site);
  const resultOk = ctx.define(op.result, 'tile', site);
  if (!operandsOk || !resultOk) return;
  const arity = arityOf(op.fn);
  if (arity === undefined) {
    ctx.report('verify/type', site, `unknown map function '${op.fn}' (expected one of ${[...UNARY_FNS, ...BINARY_FNS].join(', ')})`);
    return;
  }
  if (op.operands.length !== arity) {
    ctx.report('verify/type', site, `${op.fn} takes ${arity} operand${arity === 1 ? '' : 's'}, but ${op.operands.length} are given`);
    return;
  }
  checkSameDtype(ctx, site, op.operands, op.result);
  const shape = op.operands.reduce<number[] | undefined>((s, v) => s && broadcastShapes(s, v.type.shape), []);
  if (shape === undefined) {
    ctx.report('verify/shape', site, `operand shapes do not broadcast: ${op.operands.map((v) => `%${v.name} is ${formatShape(v.type.shape)}`).join(', ')}`);
  } else if (!shapesEqual(shape, op.result.type.shape)) {
    ctx.report('verify/shape', site, `%${op.result.name} is ${formatShape(op.result.type.shape)}, but the operands broadcast to ${formatShape(shape)}`);
  }
}

function arityOf(fn: MapFn): 1 | 2 | undefined {
  if ((UNARY_FNS as readonly string[]).includes(fn)) return 1;
  if ((BINARY_FNS as readonly string[]).includes(fn)) return 2;
  return undefined;
}

/** Elementwise ops keep their operands' dtype. */
function checkSameDtype(ctx: Context, site: Site, operands: readonly TileValue[], result: TileValue): void {
  const [first, ...rest] = operands;
  if (first === undefined) return;
  const other = rest.find((v) => v.type.dtype !== first.type.dtype);
  if (other !== undefined) {
    ctx.report('verify/dtype', site, `operands have different dtypes: %${first.name} is ${first.type.dtype}, %${other.name} is ${other.type.dtype}`);
  } else if (result.type.dtype !== first.type.dtype) {
    ctx.report('verify/dtype', site, `%${result.name} is ${result.type.dtype}, but its operands are ${first.type.dtype}`);
  }
}

function checkReduce(ctx: Context, op: ReduceOp): void {
  const site = siteOf(op, op.result);
  const operandOk = ctx.use(op.value, 'tile', site);
  const resultOk = ctx.define(op.result, 'tile', site);
  if (!operandOk || !resultOk) return;
  if (!REDUCE_FNS.includes(op.fn)) {
    ctx.report('verify/type', site, `unknown reduce function '${op.fn}' (expected one of ${REDUCE_FNS.join(', ')})`);
  }
  const { shape } = op.value.type;
  if (!isIndexBelow(op.axis, shape.length)) {
    ctx.report('verify/rank', site, `axis ${op.axis} is not an axis of %${op.value.name}, which is ${describeShape(shape)}`);
    return;
  }
  const expected = shape.map((d, i) => (i === op.axis ? 1 : d));
  if (!shapesEqual(op.result.type.shape, expected)) {
    ctx.report('verify/shape', site, `%${op.result.name} is ${formatShape(op.result.type.shape)}, but reducing axis ${op.axis} of %${op.value.name} (${formatShape(shape)}) gives ${formatShape(expected)}`);
  }
  checkSameDtype(ctx, site, [op.value], op.result);
}

function checkCast(ctx: Context, op: CastOp): void {
  const site = siteOf(op, op.result);
  const operandOk = ctx.use(op.value, 'tile', site);
  const resultOk = ctx.define(op.result, 'tile', site);
  if (!operandOk || !resultOk) return;
  if (!shapesEqual(op.value.type.shape, op.result.type.shape)) {
    ctx.report('verify/shape', site, `a cast keeps the shape, but %${op.value.name} is ${formatShape(op.value.type.shape)} and %${op.result.name} is ${formatShape(op.result.type.shape)}`);
  }
}

function checkSync(ctx: Context, op: WaitOp | ArriveOp): void {
  const site = siteOf(op, op.chunk);
  ctx.use(op.chunk, 'chunk', site);
  ctx.useGuard(op.guard, site);
  if (op.op === 'wait' && op.rank !== undefined && !isIndexBelow(op.rank, ctx.module.ranks)) {
    ctx.report('verify/module', site, `wait %${op.chunk.name} on rank ${op.rank}: not a rank in [0, ${ctx.module.ranks})`);
  }
}

/** Any yield the loop checker did not take as its body's terminator is out of place. */
function checkStrayYield(ctx: Context, op: YieldOp): void {
  const site = siteOf(op, op.values[0]);
  ctx.useAll(op.values, 'tile', site);
  const where = ctx.loopDepth === 0 ? 'at the kernel top level; yield only ends a loop body' : 'in the middle of a loop body; yield must be its last op';
  ctx.report('verify/yield', site, `yield ${where}`);
}

function checkFor(ctx: Context, op: ForOp): void {
  const site = siteOf(op, op.inductionVar);
  const boundsOk = ctx.useAffine([op.lower, op.upper], site);
  const initsOk = ctx.useAll(op.inits, 'tile', site);
  if (!Number.isInteger(op.step) || op.step <= 0) {
    ctx.report('verify/loop', site, `step ${op.step} must be a positive integer`);
  }
  ctx.enterLoop(op.inductionVar.name);
  ctx.define(op.inductionVar, 'index', site);
  const iterArgsOk = op.iterArgs.map((v) => ctx.define(v, 'tile', siteOf(op, v))).every(Boolean);
  const last = op.body[op.body.length - 1];
  const terminator = last?.op === 'yield' ? last : undefined;
  checkBlock(ctx, terminator ? op.body.slice(0, -1) : op.body);
  if (terminator) checkTerminator(ctx, terminator, op, iterArgsOk);
  else ctx.report('verify/yield', site, `the body of the loop over %${op.inductionVar.name} must end with a yield of its ${op.iterArgs.length} carried value(s)`);
  ctx.leaveLoop();
  const resultsOk = op.results.map((v) => ctx.define(v, 'tile', siteOf(op, v))).every(Boolean);
  if (boundsOk && initsOk && iterArgsOk && resultsOk) checkCarried(ctx, op, site);
}

/** inits, iterArgs and results line up one to one, with equal types. */
function checkCarried(ctx: Context, op: ForOp, site: Site): void {
  const n = op.iterArgs.length;
  if (op.inits.length !== n || op.results.length !== n) {
    ctx.report('verify/loop', site, `the loop over %${op.inductionVar.name} has ${op.inits.length} init(s), ${n} iter arg(s) and ${op.results.length} result(s); they must match one to one`);
    return;
  }
  op.iterArgs.forEach((arg, i) => {
    for (const other of [op.inits[i]!, op.results[i]!]) {
      if (!typesEqual(arg.type, other.type)) {
        ctx.report('verify/type', siteOf(op, other), `%${other.name} is ${formatType(other.type)}, but the iter arg %${arg.name} it pairs with is ${formatType(arg.type)}`);
      }
    }
  });
}

/** The body's final yield passes exactly the carried values' types. */
function checkTerminator(ctx: Context, y: YieldOp, loop: ForOp, iterArgsOk: boolean): void {
  if (!ctx.useAll(y.values, 'tile', siteOf(y, y.values[0])) || !iterArgsOk) return;
  const iv = loop.inductionVar.name;
  if (y.values.length !== loop.iterArgs.length) {
    ctx.report('verify/yield', siteOf(y, y.values[0]), `yield passes ${y.values.length} value(s), but the loop over %${iv} carries ${loop.iterArgs.length}`);
    return;
  }
  y.values.forEach((v, i) => {
    const arg = loop.iterArgs[i]!;
    if (!typesEqual(v.type, arg.type)) {
      ctx.report('verify/yield', siteOf(y, v), `yields %${v.name} (${formatType(v.type)}) for the iter arg %${arg.name} (${formatType(arg.type)}) of the loop over %${iv}`);
    }
  });
}

// ---------------------------------------------------------------------------------------------------
// Small helpers.

function isPositiveInteger(x: number): boolean {
  return Number.isInteger(x) && x >= 1;
}

/** An integer in `[0, n)`. */
function isIndexBelow(x: number, n: number): boolean {
  return Number.isInteger(x) && x >= 0 && x < n;
}

function typesEqual(a: Type, b: Type): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind !== 'tile') return true;
  const t = b as TileType;
  return a.dtype === t.dtype && shapesEqual(a.shape, t.shape);
}

/** `tile<64x32xf32>`, `index`, `chunk`. */
function formatType(t: Type): string {
  return t.kind === 'tile' ? `tile<${[...t.shape, t.dtype].join('x')}>` : t.kind;
}

function article(kind: Kind): string {
  return kind === 'index' ? 'an index' : `a ${kind}`;
}

/** `64x32 (rank 2)`; a rank-0 tile is `a scalar (rank 0)`. */
function describeShape(shape: Shape): string {
  return `${shape.length === 0 ? 'a scalar' : formatShape(shape)} (rank ${shape.length})`;
}
