/**
 * `arbModule()`: a fast-check arbitrary of random, well-typed modules, built with the builder (so they
 * pass the verifier). Every op kind, distribution, dtype, chunk kind, backend and tile order shows up;
 * loops nest up to `maxDepth` deep and carry 0–2 values. Decisions are drawn through `fc.gen()`, so
 * counterexamples shrink.
 *
 * What the modules respect: dot operands [M,K]x[K,N] of one dtype with an f32 [M,N] accumulator; loads
 * and stores with one offset per tensor axis and tiles of the tensor's rank; stores of the tensor's
 * dtype; map operands of one dtype, the second broadcasting to the first; program_id axes inside the
 * grid; chunks between two different ranks with a nonempty region inside the tensor; table orders
 * (one per rank for a rank table) that list every grid tile once; segment orders whose boxes partition
 * the grid; values used only where they are in scope.
 */
import fc from 'fast-check';
import {
  buildModule,
  type GuardCondition,
  broadcastShapes,
  shapesEqual,
  BINARY_FNS,
  CHUNK_KINDS,
  COMM_BACKENDS,
  DTYPES,
  REDUCE_FNS,
  UNARY_FNS,
  type AffineExpr,
  type AffineTerm,
  type Box,
  type ChunkValue,
  type Distribution,
  type DType,
  type IndexValue,
  type KernelBuilder,
  type Module,
  type ModuleBuilder,
  type Shape,
  type TensorHandle,
  type TileOrder,
  type TileValue,
} from '../src/index.js';

export interface ArbModuleOptions {
  /** Ops drawn at the kernel's top level (besides program ids and helper ops); default 8. */
  readonly maxOps?: number;
  /** How deep loops nest; default 2. */
  readonly maxDepth?: number;
}

export function arbModule(options: ArbModuleOptions = {}): fc.Arbitrary<Module> {
  return fc.gen().map((g) => randomModule(new Chooser(g), { maxOps: 8, maxDepth: 2, ...options }));
}

/** Draws the decisions of one module. */
class Chooser {
  constructor(private readonly g: fc.GeneratorValue) {}

  int(min: number, max: number): number {
    return this.g(fc.integer, { min, max });
  }

  chance(percent: number): boolean {
    return this.int(0, 99) < percent;
  }

  pick<T>(xs: readonly T[]): T {
    if (xs.length === 0) throw new Error('Chooser.pick: nothing to pick from');
    return xs[this.int(0, xs.length - 1)]!;
  }

  permutation<T>(xs: readonly T[]): T[] {
    return this.g(fc.shuffledSubarray, [...xs], { minLength: xs.length, maxLength: xs.length });
  }

  double(): number {
    return this.g(fc.double);
  }
}

interface TensorInfo {
  readonly handle: TensorHandle;
  readonly shape: Shape;
  readonly dtype: DType;
}

/** Some names need quoting in the text (`@"rs-gemm"`). */
const MODULE_NAMES = ['gemm', 'ag_gemm', 'rs-gemm', 'mod.v2', '0'];
const KERNEL_NAMES = ['k', 'main', 'fused kernel'];
const VALUE_NAMES = [undefined, undefined, 'x', 'acc', 'tmp_1', 'a'];
const TILE_DIMS = [1, 2, 4, 8, 16, 32];
const SPECIAL_CONSTANTS = [0, 1, -1, -1.5, 0.1, 1e-7, 1e21, -0, Infinity, -Infinity, NaN];

function randomModule(c: Chooser, options: Required<ArbModuleOptions>): Module {
  const ranks = c.int(1, 4);
  const grid = Array.from({ length: c.int(1, 3) }, () => c.int(1, 4));
  const order = randomOrder(c, grid, ranks);
  return buildModule(c.pick(MODULE_NAMES), { ranks }, (mb) => {
    const tensors = randomTensors(c, mb);
    const chunks = ranks > 1 ? randomChunks(c, mb, ranks, tensors) : [];
    mb.kernel(
      c.pick(KERNEL_NAMES),
      grid,
      (kb) => new BodyGenerator(c, kb, tensors, chunks, grid.length, options).kernelBody(),
      order,
    );
  });
}

function gridTiles(grid: readonly number[]): number[][] {
  return grid.reduce<number[][]>((tiles, size) => tiles.flatMap((t) => Array.from({ length: size }, (_, i) => [...t, i])), [[]]);
}

function randomOrder(c: Chooser, grid: readonly number[], ranks: number): TileOrder {
  switch (c.int(0, 5)) {
    case 0:
      return { kind: 'row-major' };
    case 1:
      return { kind: 'column-major' };
    case 2:
      return { kind: 'grouped', groupSize: c.int(1, 8) };
    case 3:
      return { kind: 'table', tiles: c.permutation(gridTiles(grid)) };
    case 4:
      return { kind: 'rank-table', tables: Array.from({ length: ranks }, () => c.permutation(gridTiles(grid))) };
    default:
      return { kind: 'segments', groupSize: c.int(1, 8), ranks: Array.from({ length: ranks }, () => c.permutation(partition(c, grid))) };
  }
}

/**
 * The grid cut into boxes: bands along a random axis (row bands, say), each band cut again or kept
 * whole, so that the boxes partition the grid.
 */
function partition(c: Chooser, grid: readonly number[]): Box[] {
  const cut = (b: Box, depth: number): Box[] => {
    const axes = b.lo.map((_, axis) => axis).filter((axis) => b.hi[axis]! - b.lo[axis]! > 1);
    if (axes.length === 0 || depth >= 3 || !c.chance(60)) return [b];
    const axis = c.pick(axes);
    const at = c.int(b.lo[axis]! + 1, b.hi[axis]! - 1);
    const below: Box = { lo: [...b.lo], hi: b.hi.map((x, i) => (i === axis ? at : x)) };
    const above: Box = { lo: b.lo.map((x, i) => (i === axis ? at : x)), hi: [...b.hi] };
    return [...cut(below, depth + 1), ...cut(above, depth + 1)];
  };
  return cut({ lo: grid.map(() => 0), hi: [...grid] }, 0);
}

function randomDistribution(c: Chooser, rank: number): Distribution {
  switch (c.int(0, 2)) {
    case 0:
      return { kind: 'replicated' };
    case 1:
      return { kind: 'sharded', axis: c.int(0, rank - 1) };
    default:
      return { kind: 'partial', reduce: 'sum' };
  }
}

function randomTensors(c: Chooser, mb: ModuleBuilder): TensorInfo[] {
  return Array.from({ length: c.int(2, 5) }, (_, i) => {
    const rank = c.int(1, 3);
    const shape = Array.from({ length: rank }, () => c.pick([1, 3, 16, 33, 64, 128]));
    const dtype = c.pick(DTYPES);
    const handle = mb.tensor(`T${i}`, shape, dtype, randomDistribution(c, rank));
    return { handle, shape, dtype };
  });
}

function randomChunks(c: Chooser, mb: ModuleBuilder, ranks: number, tensors: readonly TensorInfo[]): ChunkValue[] {
  return Array.from({ length: c.int(0, 4) }, () => {
    const tensor = c.pick(tensors);
    const lo = tensor.shape.map((d) => c.int(0, d - 1));
    const hi = tensor.shape.map((d, i) => c.int(lo[i]! + 1, d));
    const src = c.int(0, ranks - 1);
    const dst = (src + c.int(1, ranks - 1)) % ranks;
    const spec = { tensor: tensor.handle.name, region: { lo, hi }, src, dst, step: c.int(0, 3) };
    return mb.chunk({ ...spec, kind: c.pick(CHUNK_KINDS), backend: c.pick(COMM_BACKENDS) }, c.pick([undefined, 'ch']));
  });
}

/** The values an op may use: those defined before it in its block or an enclosing one. */
interface Scope {
  readonly indices: IndexValue[];
  readonly tiles: TileValue[];
}

type Tile2 = TileValue<readonly [number, number], DType>;
type OpKind = 'constant' | 'load' | 'store' | 'dot' | 'unary' | 'binary' | 'reduce' | 'cast' | 'wait' | 'arrive' | 'for';

class BodyGenerator {
  constructor(
    private readonly c: Chooser,
    private readonly kb: KernelBuilder,
    private readonly tensors: readonly TensorInfo[],
    private readonly chunks: readonly ChunkValue[],
    private readonly gridRank: number,
    private readonly options: Required<ArbModuleOptions>,
  ) {}

  kernelBody(): void {
    const scope: Scope = { indices: [], tiles: [] };
    const programIds = this.c.int(1, this.gridRank + 1);
    for (let i = 0; i < programIds; i++) {
      const axis = this.c.int(0, this.gridRank - 1);
      scope.indices.push(this.kb.programId(axis, this.c.pick([undefined, 'pm', 'pn'])));
    }
    this.ops(scope, 0, this.c.int(1, this.options.maxOps));
  }

  private ops(scope: Scope, depth: number, count: number): void {
    for (let i = 0; i < count; i++) this.op(scope, depth);
  }

  private op(scope: Scope, depth: number): void {
    const kinds: OpKind[] = ['constant', 'load', 'store', 'dot', 'unary', 'binary', 'reduce', 'cast'];
    if (this.chunks.length > 0) kinds.push('wait', 'arrive');
    if (depth < this.options.maxDepth) kinds.push('for', 'for');
    const kind = this.c.pick(kinds);
    switch (kind) {
      case 'constant':
        return void this.constant(scope, this.tileShape(this.c.int(0, 3)), this.c.pick(DTYPES));
      case 'load':
        return void this.load(scope, this.c.pick(this.tensors));
      case 'store':
        return this.store(scope);
      case 'dot':
        return void this.dot(scope);
      case 'unary':
        return void this.define(scope, this.kb.unary(this.c.pick(UNARY_FNS), this.anyTile(scope), this.name()));
      case 'binary':
        return void this.binary(scope);
      case 'reduce':
        return void this.reduce(scope);
      case 'cast':
        return void this.define(scope, this.kb.cast(this.anyTile(scope), this.c.pick(DTYPES), this.name()));
      case 'wait':
        return this.kb.wait(this.c.pick(this.chunks), this.guard(scope));
      case 'arrive':
        return this.kb.arrive(this.c.pick(this.chunks), this.guard(scope));
      case 'for':
        return this.loop(scope, depth);
    }
  }

  private name(): string | undefined {
    return this.c.pick(VALUE_NAMES);
  }

  private define<T extends TileValue>(scope: Scope, v: T): T {
    scope.tiles.push(v);
    return v;
  }

  private tileShape(rank: number): number[] {
    return Array.from({ length: rank }, () => this.c.pick(TILE_DIMS));
  }

  private constantValue(): number {
    return this.c.chance(70) ? this.c.pick(SPECIAL_CONSTANTS) : this.c.double();
  }

  private constant(scope: Scope, shape: Shape, dtype: DType): TileValue {
    return this.define(scope, this.kb.constant(this.constantValue(), shape, dtype, this.name()));
  }

  /** An existing tile that `accept`s, or (sometimes, or when there is none) a fresh one from `make`. */
  private reuseOr(scope: Scope, accept: (t: TileValue) => boolean, make: () => TileValue): TileValue {
    const candidates = scope.tiles.filter(accept);
    return candidates.length > 0 && this.c.chance(70) ? this.c.pick(candidates) : make();
  }

  private anyTile(scope: Scope): TileValue {
    return this.reuseOr(scope, () => true, () => this.constant(scope, this.tileShape(this.c.int(0, 3)), this.c.pick(DTYPES)));
  }

  /** `constant + Σ coeff·value` over distinct index values in scope, coefficients possibly negative. */
  private affine(scope: Scope): AffineExpr {
    const terms: AffineTerm[] = [];
    for (const value of scope.indices) {
      if (terms.length < 3 && this.c.chance(40)) terms.push({ value, coeff: this.c.pick([1, -1, 2, -3, 32, 64, -64]) });
    }
    return { constant: this.c.chance(50) ? 0 : this.c.int(-100, 100), terms };
  }

  /** No guard, or one to two conditions, ranges possibly negative. */
  private guard(scope: Scope): GuardCondition[] {
    const n = this.c.int(0, 2);
    return Array.from({ length: n }, () => {
      const lo = this.c.int(-8, 8);
      return { expr: this.affine(scope), lo, hi: lo + this.c.int(1, 9) };
    });
  }

  private load(scope: Scope, tensor: TensorInfo): TileValue {
    const offsets = tensor.shape.map(() => this.affine(scope));
    return this.define(scope, this.kb.load(tensor.handle, offsets, this.tileShape(tensor.shape.length), this.name()));
  }

  private store(scope: Scope): void {
    const tensor = this.c.pick(this.tensors);
    const fits = (t: TileValue) => t.type.dtype === tensor.dtype && t.type.shape.length === tensor.shape.length;
    const value = this.reuseOr(scope, fits, () => this.load(scope, tensor));
    this.kb.store(tensor.handle, tensor.shape.map(() => this.affine(scope)), value);
  }

  /** `a [M,K] · b [K,N]` of one dtype, with an f32 [M,N] accumulator half of the time. */
  private dot(scope: Scope): TileValue {
    const a = this.reuseOr(
      scope,
      (t) => t.type.shape.length === 2,
      () => this.constant(scope, this.tileShape(2), this.c.pick(DTYPES)),
    ) as Tile2;
    const [m, k] = a.type.shape;
    const b = this.reuseOr(
      scope,
      (t) => t.type.shape.length === 2 && t.type.shape[0] === k && t.type.dtype === a.type.dtype,
      () => this.constant(scope, [k, this.c.pick(TILE_DIMS)], a.type.dtype),
    ) as Tile2;
    const n = b.type.shape[1];
    if (!this.c.chance(50)) return this.define(scope, this.kb.dot(a, b, undefined, this.name()));
    const acc = this.reuseOr(
      scope,
      (t) => t.type.dtype === 'f32' && shapesEqual(t.type.shape, [m, n]),
      () => this.constant(scope, [m, n], 'f32'),
    ) as TileValue<readonly [number, number], 'f32'>;
    return this.define(scope, this.kb.dot(a, b, acc, this.name()));
  }

  /** A shape that broadcasts to `shape`: leading axes dropped, some axes set to 1. */
  private broadcastable(shape: Shape): number[] {
    const kept = shape.slice(this.c.int(0, shape.length));
    return kept.map((d) => (this.c.chance(30) ? 1 : d));
  }

  private binary(scope: Scope): TileValue {
    const a = this.anyTile(scope);
    const fits = (t: TileValue) =>
      t.type.dtype === a.type.dtype && shapesEqual(broadcastShapes(a.type.shape, t.type.shape) ?? [], a.type.shape);
    const b = this.reuseOr(scope, fits, () => this.constant(scope, this.broadcastable(a.type.shape), a.type.dtype));
    return this.define(scope, this.kb.binary(this.c.pick(BINARY_FNS), a, b, this.name()));
  }

  private reduce(scope: Scope): TileValue {
    const x = this.reuseOr(
      scope,
      (t) => t.type.shape.length > 0,
      () => this.constant(scope, this.tileShape(this.c.int(1, 3)), this.c.pick(DTYPES)),
    );
    const axis = this.c.int(0, x.type.shape.length - 1);
    return this.define(scope, this.kb.reduce(this.c.pick(REDUCE_FNS), x, axis, this.name()));
  }

  /** A loop carrying 0–2 values; what its body defines stays inside it. */
  private loop(scope: Scope, depth: number): void {
    const inits = Array.from({ length: this.c.int(0, 2) }, () => this.anyTile(scope));
    const lower = this.affine(scope);
    const upper = this.affine(scope);
    const step = this.c.pick([1, 2, 16, 32, 64]);
    const ivName = this.c.pick(['k', 'i', 'j']);
    const results = this.kb.for(
      lower,
      upper,
      step,
      inits,
      (iv, args) => {
        const inner: Scope = { indices: [...scope.indices, iv], tiles: [...scope.tiles, ...args] };
        this.ops(inner, depth + 1, this.c.int(0, 4));
        return args.map((arg) => this.nextValue(inner, arg));
      },
      ivName,
    );
    scope.tiles.push(...results);
  }

  /** What a loop body yields for `arg`: a tile of its type, often computed from it. */
  private nextValue(scope: Scope, arg: TileValue): TileValue {
    const sameType = (t: TileValue) => t.type.dtype === arg.type.dtype && shapesEqual(t.type.shape, arg.type.shape);
    return this.reuseOr(scope, sameType, () => this.define(scope, this.kb.unary(this.c.pick(UNARY_FNS), arg, this.name())));
  }
}
