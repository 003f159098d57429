/**
 * The builder: a local tiled kernel reads about as short as its Triton twin.
 *
 *   const m = buildModule('gemm', { ranks: 1 }, (mb) => {
 *     const A = mb.tensor('A', [M, K], 'f32');
 *     ...
 *     mb.kernel('gemm', [M / 64, N / 64], (kb) => {
 *       const pm = kb.programId(0, 'pm'), pn = kb.programId(1, 'pn');
 *       const [acc] = kb.for(0, K, 32, [kb.zeros([64, 64])], (k, [acc]) => {
 *         const a = kb.load(A, [mul(pm, 64), k], [64, 32]);
 *         const b = kb.load(B, [k, mul(pn, 64)], [32, 64]);
 *         return [kb.dot(a, b, acc)];
 *       });
 *       kb.store(C, [mul(pm, 64), mul(pn, 64)], acc);
 *     });
 *   });
 *
 * Shapes written as literals are checked by TypeScript (`dot` of [64,32] by [16,64] does not compile);
 * the verifier catches the rest when the module is built.
 */
import { affine, type AffineLike } from './affine.js';
import { IRBuildError, IRVerifyError } from './errors.js';
import { deepFreeze } from './freeze.js';
import type { ChunkSpec } from './plan.js';
import { broadcastShapes } from './shapes.js';
import type {
  AffineRange,
  BinaryFn,
  ChunkDecl,
  ChunkValue,
  Distribution,
  DType,
  IndexValue,
  Kernel,
  Module,
  Op,
  ReduceFn,
  Shape,
  TensorDecl,
  TileOrder,
  TileValue,
  Type,
  UnaryFn,
  Value,
} from './types.js';
import { verify } from './verify.js';

/** A tensor as the builder hands it out: its name, with its dtype and rank in the type. */
export interface TensorHandle<D extends DType = DType, R extends number = number> {
  readonly name: string;
  readonly dtype: D;
  readonly rank: R;
}

export const replicated = (): Distribution => ({ kind: 'replicated' });
export const sharded = (axis: number): Distribution => ({ kind: 'sharded', axis });
export const partialSum = (): Distribution => ({ kind: 'partial', reduce: 'sum' });


/** One condition of a guard: `lo <= expr < hi`. */
export interface GuardCondition {
  readonly expr: AffineLike;
  readonly lo: number;
  readonly hi: number;
}

function toGuard(guard: readonly GuardCondition[] | undefined): { guard?: AffineRange[] } {
  return guard && guard.length > 0 ? { guard: guard.map((g) => ({ expr: affine(g.expr), lo: g.lo, hi: g.hi })) } : {};
}

/** Hands out value ids and names that are unique in one module. */
class ValueNamer {
  private nextId = 0;
  private readonly taken = new Set<string>();

  fresh<T extends Type>(type: T, name?: string): Value<T> {
    const id = this.nextId++;
    return { id, name: this.unique(name ?? String(id)), type };
  }

  private unique(base: string): string {
    if (!/^[A-Za-z0-9_]+$/.test(base)) throw new IRBuildError(`value name '${base}' may hold only letters, digits and '_'`);
    let name = base;
    for (let i = 1; this.taken.has(name); i++) name = `${base}_${i}`;
    this.taken.add(name);
    return name;
  }
}

/** Builds the ops of one kernel body; nested regions (loop bodies) push a fresh op list. */
export class KernelBuilder {
  private readonly blocks: Op[][] = [[]];

  constructor(private readonly namer: ValueNamer) {}

  /** @internal */
  get ops(): readonly Op[] {
    return this.blocks[0]!;
  }

  private emit(op: Op): void {
    this.blocks[this.blocks.length - 1]!.push(op);
  }

  private tile<const S extends Shape, D extends DType>(shape: S, dtype: D, name?: string): TileValue<S, D> {
    return this.namer.fresh({ kind: 'tile', shape, dtype }, name);
  }

  /** The rank this copy of the kernel runs for. */
  rankId(name = 'rank'): IndexValue {
    const result = this.namer.fresh({ kind: 'index' }, name);
    this.emit({ op: 'rank_id', result });
    return result;
  }

  programId(axis: number, name?: string): IndexValue {
    const result = this.namer.fresh({ kind: 'index' }, name ?? `pid${axis}`);
    this.emit({ op: 'program_id', result, axis });
    return result;
  }

  constant<const S extends Shape, D extends DType = 'f32'>(value: number, shape: S, dtype?: D, name?: string): TileValue<S, D> {
    const result = this.tile(shape, (dtype ?? 'f32') as D, name);
    this.emit({ op: 'constant', result, value });
    return result;
  }

  zeros<const S extends Shape, D extends DType = 'f32'>(shape: S, dtype?: D, name?: string): TileValue<S, D> {
    return this.constant(0, shape, dtype, name);
  }

  /** Loads the `shape` tile of `tensor` whose first element is at `offsets` (elements, not blocks). */
  load<const S extends Shape, D extends DType>(
    tensor: TensorHandle<D>,
    offsets: readonly AffineLike[],
    shape: S,
    name?: string,
  ): TileValue<S, D> {
    const result = this.tile(shape, tensor.dtype, name);
    this.emit({ op: 'load', result, tensor: tensor.name, offsets: offsets.map(affine) });
    return result;
  }

  /**
   * Rows of a 2-D `tensor` picked by `index` (f32 row numbers, [BM] or [BM, 1]), `columns` wide from
   * `column` on: a [BM, columns] tile. Out-of-range indices are clamped into the tensor's rows.
   */
  gather<M extends number, const N extends number, D extends DType>(
    tensor: TensorHandle<D, 2>,
    index: TileValue<readonly [M] | readonly [M, 1], 'f32'>,
    column: AffineLike,
    columns: N,
    name?: string,
  ): TileValue<readonly [M, N], D> {
    const shape = [index.type.shape[0], columns] as unknown as readonly [M, N];
    const result = this.tile(shape, tensor.dtype, name);
    this.emit({ op: 'gather', result, tensor: tensor.name, index, column: affine(column) });
    return result;
  }

  store<D extends DType>(tensor: TensorHandle<D>, offsets: readonly AffineLike[], value: TileValue<Shape, D>): void {
    this.emit({ op: 'store', value, tensor: tensor.name, offsets: offsets.map(affine) });
  }

  /** `acc + a·b`, accumulated in f32. */
  dot<M extends number, K extends number, N extends number, D extends DType>(
    a: TileValue<readonly [M, K], D>,
    b: TileValue<readonly [NoInfer<K>, N], NoInfer<D>>,
    acc?: TileValue<readonly [NoInfer<M>, NoInfer<N>], 'f32'>,
    name?: string,
  ): TileValue<readonly [M, N], 'f32'> {
    const shape = [a.type.shape[0], b.type.shape[1]] as unknown as readonly [M, N];
    const result = this.tile(shape, 'f32', name);
    this.emit(acc ? { op: 'dot', result, a, b, acc } : { op: 'dot', result, a, b });
    return result;
  }

  /** `acc + a·bᵀ` for a [M,K], b [N,K] (attention's Q·Kᵀ), accumulated in f32. */
  dotTransposeB<M extends number, K extends number, N extends number, D extends DType>(
    a: TileValue<readonly [M, K], D>,
    b: TileValue<readonly [N, NoInfer<K>], NoInfer<D>>,
    acc?: TileValue<readonly [NoInfer<M>, NoInfer<N>], 'f32'>,
    name?: string,
  ): TileValue<readonly [M, N], 'f32'> {
    const shape = [a.type.shape[0], b.type.shape[0]] as unknown as readonly [M, N];
    const result = this.tile(shape, 'f32', name);
    this.emit({ op: 'dot', result, a, b, ...(acc ? { acc } : {}), transposeB: true });
    return result;
  }

  unary<S extends Shape, D extends DType>(fn: UnaryFn, x: TileValue<S, D>, name?: string): TileValue<S, D> {
    const result = this.tile(x.type.shape, x.type.dtype, name);
    this.emit({ op: 'map', result, fn, operands: [x] });
    return result;
  }

  /** Elementwise `fn(a, b)`; `b` broadcasts to `a`'s shape (dimensions of size 1, or rank 0). */
  binary<S extends Shape, D extends DType>(
    fn: BinaryFn,
    a: TileValue<S, D>,
    b: TileValue<Shape, NoInfer<D>>,
    name?: string,
  ): TileValue<S, D> {
    const shape = broadcastShapes(a.type.shape, b.type.shape);
    if (shape === undefined || shape.join() !== a.type.shape.join()) {
      throw new IRBuildError(`map ${fn}: [${b.type.shape}] does not broadcast to [${a.type.shape}]`);
    }
    const result = this.tile(a.type.shape, a.type.dtype, name);
    this.emit({ op: 'map', result, fn, operands: [a, b] });
    return result;
  }

  add<S extends Shape, D extends DType>(a: TileValue<S, D>, b: TileValue<Shape, NoInfer<D>>, name?: string) {
    return this.binary('add', a, b, name);
  }
  mulTile<S extends Shape, D extends DType>(a: TileValue<S, D>, b: TileValue<Shape, NoInfer<D>>, name?: string) {
    return this.binary('mul', a, b, name);
  }

  /** Reduces `axis`, which stays with size 1 so the result broadcasts back. */
  reduce<D extends DType>(fn: ReduceFn, x: TileValue<Shape, D>, axis: number, name?: string): TileValue<Shape, D> {
    const shape = x.type.shape.map((d, i) => (i === axis ? 1 : d));
    const result = this.tile(shape, x.type.dtype, name);
    this.emit({ op: 'reduce', result, fn, value: x, axis });
    return result;
  }

  cast<S extends Shape, D extends DType>(x: TileValue<S>, dtype: D, name?: string): TileValue<S, D> {
    const result = this.tile(x.type.shape, dtype, name);
    this.emit({ op: 'cast', result, value: x });
    return result;
  }

  /**
   * `for iv = lower; iv < upper; iv += step`, carrying `inits` through the body, which returns the
   * next values. Returns the carried values after the last iteration.
   */
  for<const T extends readonly TileValue[]>(
    lower: AffineLike,
    upper: AffineLike,
    step: number,
    inits: T,
    body: (iv: IndexValue, args: T) => T,
    ivName = 'k',
  ): T {
    const inductionVar = this.namer.fresh({ kind: 'index' }, ivName);
    const iterArgs = inits.map((v) => this.tile(v.type.shape, v.type.dtype, `${v.name}_it`)) as unknown as T;
    this.blocks.push([]);
    let bodyOps: Op[];
    try {
      const yielded = body(inductionVar, iterArgs);
      this.emit({ op: 'yield', values: yielded });
    } finally {
      bodyOps = this.blocks.pop()!;
    }
    const results = inits.map((v) => this.tile(v.type.shape, v.type.dtype, `${v.name}_out`)) as unknown as T;
    this.emit({
      op: 'for',
      results,
      inductionVar,
      lower: affine(lower),
      upper: affine(upper),
      step,
      iterArgs,
      inits,
      body: bodyOps,
    });
    return results;
  }

  /** Waits for `chunk` on its destination rank; with a guard, only where every `lo <= expr < hi` holds. */
  wait(chunk: ChunkValue, guard?: readonly GuardCondition[]): void {
    this.emit({ op: 'wait', chunk, ...toGuard(guard) });
  }

  /** Marks this tile's part of `chunk` written (on its source rank); guarded like `wait`. */
  arrive(chunk: ChunkValue, guard?: readonly GuardCondition[]): void {
    this.emit({ op: 'arrive', chunk, ...toGuard(guard) });
  }
}

/** Builds a module: tensors, chunks, and one kernel. */
export class ModuleBuilder {
  private readonly namer = new ValueNamer();
  private readonly tensors: TensorDecl[] = [];
  private readonly chunks: ChunkDecl[] = [];
  private kernelDef: Kernel | undefined;

  constructor(
    private readonly name: string,
    private readonly ranks: number,
  ) {}

  tensor<const S extends Shape, D extends DType>(
    name: string,
    shape: S,
    dtype: D,
    distribution: Distribution = replicated(),
  ): TensorHandle<D, S['length']> {
    this.tensors.push({ name, shape, dtype, distribution });
    return { name, dtype, rank: shape.length };
  }

  chunk(spec: ChunkSpec, name?: string): ChunkValue {
    const value = this.namer.fresh({ kind: 'chunk' }, name ?? `c${this.chunks.length}`);
    // Spelled-out `undefined` fields take the defaults too; the region is copied so that freezing the
    // module leaves the caller's plan alone.
    const region = { lo: [...spec.region.lo], hi: [...spec.region.hi] };
    this.chunks.push({ ...spec, region, kind: spec.kind ?? 'copy', backend: spec.backend ?? 'auto', value });
    return value;
  }

  kernel(name: string, grid: readonly number[], body: (kb: KernelBuilder) => void, order: TileOrder = { kind: 'row-major' }): void {
    if (this.kernelDef) throw new IRBuildError(`module @${this.name} already has kernel @${this.kernelDef.name}`);
    const kb = new KernelBuilder(this.namer);
    body(kb);
    this.kernelDef = { name, grid, scheduler: { order }, body: kb.ops };
  }

  /** @internal */
  finish(): Module {
    if (!this.kernelDef) throw new IRBuildError(`module @${this.name} has no kernel`);
    return { name: this.name, ranks: this.ranks, tensors: this.tensors, chunks: this.chunks, kernel: this.kernelDef };
  }
}

/** Builds, verifies and freezes a module; throws `IRVerifyError` naming each bad op and value. */
export function buildModule(name: string, options: { ranks?: number }, body: (mb: ModuleBuilder) => void): Module {
  const mb = new ModuleBuilder(name, options.ranks ?? 1);
  body(mb);
  const module = deepFreeze(mb.finish());
  const diagnostics = verify(module);
  if (diagnostics.some((d) => d.severity === 'error')) throw new IRVerifyError(diagnostics);
  return module;
}
