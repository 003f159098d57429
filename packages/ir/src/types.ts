/**
 * The data of the IR: tensors with a distribution over ranks, SSA values (index scalars, tiles, chunks),
 * the ops of a tiled kernel, chunk declarations and the tile scheduler. Everything here is plain,
 * immutable data: passes return new modules (immer) and never mutate one.
 */

export type DType = 'f32' | 'f16';
export const DTYPES: readonly DType[] = ['f32', 'f16'];
/** Bytes of one element of `dtype`. */
export const dtypeBytes = (dtype: DType): number => (dtype === 'f16' ? 2 : 4);

/** A tile or tensor shape. Literal tuples (`[64, 32]`) let TypeScript check shapes in the builder. */
export type Shape = readonly number[];

export interface IndexType {
  readonly kind: 'index';
}
export interface TileType<S extends Shape = Shape, D extends DType = DType> {
  readonly kind: 'tile';
  readonly shape: S;
  readonly dtype: D;
}
export interface ChunkType {
  readonly kind: 'chunk';
}
export type Type = IndexType | TileType | ChunkType;

/**
 * An SSA value. `id` is unique in its module; `name` is what the textual form prints after `%`
 * (unique in its module too). The type parameter lets the builder reject ill-typed operands.
 */
export interface Value<T extends Type = Type> {
  readonly id: number;
  readonly name: string;
  readonly type: T;
}
export type IndexValue = Value<IndexType>;
export type TileValue<S extends Shape = Shape, D extends DType = DType> = Value<TileType<S, D>>;
export type ChunkValue = Value<ChunkType>;

/** `constant + Σ coeff·value` over index values (program ids, loop variables). */
export interface AffineTerm {
  readonly value: IndexValue;
  readonly coeff: number;
}
export interface AffineExpr {
  readonly constant: number;
  readonly terms: readonly AffineTerm[];
}

/** A half-open box of element coordinates: `lo[i] <= x[i] < hi[i]`. */
export interface Box {
  readonly lo: readonly number[];
  readonly hi: readonly number[];
}

/** How a tensor's data is laid out over ranks. */
export type Distribution =
  | { readonly kind: 'replicated' }
  | { readonly kind: 'sharded'; readonly axis: number }
  | { readonly kind: 'partial'; readonly reduce: 'sum' };

export interface TensorDecl {
  readonly name: string;
  /** The logical (global) shape, as the local kernel sees it. */
  readonly shape: Shape;
  readonly dtype: DType;
  readonly distribution: Distribution;
}

export type ChunkKind = 'copy' | 'reduce-add';
export const CHUNK_KINDS: readonly ChunkKind[] = ['copy', 'reduce-add'];
export type CommBackend = 'auto' | 'gpu-signal' | 'peer-copy';
export const COMM_BACKENDS: readonly CommBackend[] = ['auto', 'gpu-signal', 'peer-copy'];

/** A communication chunk: `region` of `tensor` moves from rank `src` to rank `dst` at `step`. */
export interface ChunkDecl {
  readonly value: ChunkValue;
  readonly tensor: string;
  readonly region: Box;
  readonly src: number;
  readonly dst: number;
  readonly step: number;
  readonly kind: ChunkKind;
  readonly backend: CommBackend;
}

/** Where in a source text an op came from (1-based), so diagnostics can point at it. */
export interface SourceLoc {
  readonly line: number;
  readonly column: number;
}

export type UnaryFn = 'neg' | 'exp' | 'log' | 'sqrt' | 'rsqrt' | 'relu' | 'silu' | 'abs';
export type BinaryFn = 'add' | 'sub' | 'mul' | 'div' | 'max' | 'min';
export type MapFn = UnaryFn | BinaryFn;
export const UNARY_FNS: readonly UnaryFn[] = ['neg', 'exp', 'log', 'sqrt', 'rsqrt', 'relu', 'silu', 'abs'];
export const BINARY_FNS: readonly BinaryFn[] = ['add', 'sub', 'mul', 'div', 'max', 'min'];
export type ReduceFn = 'sum' | 'max' | 'min';
export const REDUCE_FNS: readonly ReduceFn[] = ['sum', 'max', 'min'];

interface OpBase {
  readonly loc?: SourceLoc;
}

/**
 * `%r = rank_id`: the rank this copy of the kernel runs for, in [0, ranks). A local kernel needs it only
 * where ranks read different places, as a consumer of an all-to-all does.
 */
export interface RankIdOp extends OpBase {
  readonly op: 'rank_id';
  readonly result: IndexValue;
}
/** `%pm = program_id 0`: this tile's coordinate along grid axis `axis`. */
export interface ProgramIdOp extends OpBase {
  readonly op: 'program_id';
  readonly result: IndexValue;
  readonly axis: number;
}
/** `%z = constant 0 : tile<64x64xf32>`: a tile with every element `value`. */
export interface ConstantOp extends OpBase {
  readonly op: 'constant';
  readonly result: TileValue;
  readonly value: number;
}
/** `%a = load @A[64*%pm, %k] : tile<64x32xf32>`: elements outside the tensor read as 0 (bounds mask). */
export interface LoadOp extends OpBase {
  readonly op: 'load';
  readonly result: TileValue;
  readonly tensor: string;
  readonly offsets: readonly AffineExpr[];
}
/**
 * `%g = gather @E[%idx, 64*%pn] : tile<32x64xf32>`: row i of the result is row `idx[i]` of the 2-D
 * tensor, from the column offset on. `index` is an f32 tile [BM] or [BM, 1] holding row numbers; each
 * is truncated toward zero and clamped into [0, rows) (NaN reads row 0). Columns outside the tensor
 * read as 0. Which rows it reads depends on data, so the analyses take it to read every row.
 */
export interface GatherOp extends OpBase {
  readonly op: 'gather';
  readonly result: TileValue;
  readonly tensor: string;
  readonly index: TileValue;
  readonly column: AffineExpr;
}
/** `store %acc, @C[64*%pm, 64*%pn]`: elements outside the tensor are masked off. */
export interface StoreOp extends OpBase {
  readonly op: 'store';
  readonly value: TileValue;
  readonly tensor: string;
  readonly offsets: readonly AffineExpr[];
}
/**
 * `%d = dot %a, %b, %acc : tile<MxNxf32>`: `acc + a·b` for a [M,K], b [K,N]. With `transposeB`
 * (`dot %q, %k transpose_b`), b is [N,K] and the product is `a·bᵀ` (attention's Q·Kᵀ).
 */
export interface DotOp extends OpBase {
  readonly op: 'dot';
  readonly result: TileValue;
  readonly a: TileValue;
  readonly b: TileValue;
  readonly acc?: TileValue;
  readonly transposeB?: boolean;
}
/** `%y = map add %x, %z`: elementwise; operands broadcast where a dimension is 1 (or rank 0). */
export interface MapOp extends OpBase {
  readonly op: 'map';
  readonly result: TileValue;
  readonly fn: MapFn;
  readonly operands: readonly TileValue[];
}
/** `%r = reduce sum %x axis 1`: the reduced axis stays, with size 1. */
export interface ReduceOp extends OpBase {
  readonly op: 'reduce';
  readonly result: TileValue;
  readonly fn: ReduceFn;
  readonly value: TileValue;
  readonly axis: number;
}
/** `%h = cast %x : tile<64x64xf16>`: converts the element type. */
export interface CastOp extends OpBase {
  readonly op: 'cast';
  readonly result: TileValue;
  readonly value: TileValue;
}
/** A counted loop; `iterArgs` are carried values, initialised by `inits` and updated by the body's `yield`. */
export interface ForOp extends OpBase {
  readonly op: 'for';
  readonly results: readonly TileValue[];
  readonly inductionVar: IndexValue;
  readonly lower: AffineExpr;
  readonly upper: AffineExpr;
  readonly step: number;
  readonly iterArgs: readonly TileValue[];
  readonly inits: readonly TileValue[];
  readonly body: readonly Op[];
}
/** Ends a loop body, passing the carried values to the next iteration. */
export interface YieldOp extends OpBase {
  readonly op: 'yield';
  readonly values: readonly TileValue[];
}
/** `lo <= expr < hi`: one condition of a guard. */
export interface AffineRange {
  readonly expr: AffineExpr;
  readonly lo: number;
  readonly hi: number;
}

/**
 * On the chunk's destination rank, blocks until `chunk` has arrived in that rank's copy of its
 * tensor; on every other rank it does nothing. With a guard, only tiles (and loop iterations) that
 * satisfy every condition wait: `wait %c0 when %pm in [0, 2)`.
 */
export interface WaitOp extends OpBase {
  readonly op: 'wait';
  readonly chunk: ChunkValue;
  readonly guard?: readonly AffineRange[];
  /**
   * The rank that waits, where it is not the chunk's destination: a rank whose copy of the tensor
   * shares a cache line with the chunk's bytes on their device (`wait %c0 on rank 1`; passes'
   * cache-lines.ts). Its tiles wait before reading that line, so no stale copy of it is cached.
   */
  readonly rank?: number;
}
/**
 * On the chunk's source rank, marks that this tile has finished writing its part of `chunk`; for a
 * reduce-add, also on its destination rank, whose stored values the chunk is added onto. The last
 * arrival publishes the chunk. A no-op on other ranks; guarded like `wait`.
 */
export interface ArriveOp extends OpBase {
  readonly op: 'arrive';
  readonly chunk: ChunkValue;
  readonly guard?: readonly AffineRange[];
}

export type Op =
  | RankIdOp
  | ProgramIdOp
  | ConstantOp
  | LoadOp
  | GatherOp
  | StoreOp
  | DotOp
  | MapOp
  | ReduceOp
  | CastOp
  | ForOp
  | YieldOp
  | WaitOp
  | ArriveOp;
export type OpName = Op['op'];

/**
 * The order in which workgroup tickets visit tiles: the tile scheduler, as data.
 * `table` lists tile coordinates per ticket (what user orders become); `rank-table` lists one such
 * table per rank; `segments` is the compact per-rank form chunk-arrival order takes when each chunk's
 * tiles form a box.
 */
export type TileOrder =
  | { readonly kind: 'row-major' }
  | { readonly kind: 'column-major' }
  | { readonly kind: 'grouped'; readonly groupSize: number }
  | { readonly kind: 'table'; readonly tiles: readonly (readonly number[])[] }
  /** One table per rank: ranks see their chunks arrive in different orders. */
  | { readonly kind: 'rank-table'; readonly tables: readonly (readonly (readonly number[])[])[] }
  /**
   * Per rank, boxes of tiles (half-open, over grid coordinates) visited one after another; the boxes of
   * a rank partition the grid. Inside a box the tiles run in Triton's grouped order with `groupSize`,
   * computed in box-local coordinates (row-major inside the box when the grid is not 2-D). Its size is
   * the number of boxes, not of tiles, so it stays small where a `rank-table` would list every tile.
   */
  | { readonly kind: 'segments'; readonly groupSize: number; readonly ranks: readonly (readonly Box[])[] };

export interface TileScheduler {
  readonly order: TileOrder;
}

export interface Kernel {
  readonly name: string;
  /** Tiles along each grid axis; `program_id a` ranges over `[0, grid[a])`. */
  readonly grid: readonly number[];
  readonly scheduler: TileScheduler;
  readonly body: readonly Op[];
}

export interface Module {
  readonly name: string;
  /** Number of ranks the tensors are distributed over (1 for a purely local kernel). */
  readonly ranks: number;
  readonly tensors: readonly TensorDecl[];
  readonly chunks: readonly ChunkDecl[];
  readonly kernel: Kernel;
}
