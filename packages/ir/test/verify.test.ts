import { describe, expect, it } from 'vitest';
import {
  affine,
  buildModule,
  gemmKernel,
  mul,
  sharded,
  verify,
  type AffineLike,
  type ChunkDecl,
  type ConstantOp,
  type Diagnostic,
  type DotOp,
  type DType,
  type ForOp,
  type IndexValue,
  type LoadOp,
  type Module,
  type Op,
  type ProgramIdOp,
  type Shape,
  type StoreOp,
  type TileValue,
  type YieldOp,
} from '../src/index.js';

// ---- fixtures ------------------------------------------------------------------------------------

/** The example GEMM: pm, pn, acc = 0, for k (acc_it) { a, b, d = dot; yield d } -> acc_out; store. */
const gemm = gemmKernel({ m: 128, n: 128, k: 64 });
const [pmOp, pnOp, zeroOp, loopOp, storeOp] = gemm.kernel.body as [ProgramIdOp, ProgramIdOp, ConstantOp, ForOp, StoreOp];
const [loadA, loadB, dotOp, yieldOp] = loopOp.body as [LoadOp, LoadOp, DotOp, YieldOp];

/** The GEMM with parts replaced: the loop's fields, its body, or the kernel's top level. */
function gemmWith(patch: { loop?: Partial<ForOp>; loopBody?: Op[]; top?: (loop: ForOp) => Op[] }): Module {
  const loop: ForOp = { ...loopOp, ...patch.loop, body: patch.loopBody ?? patch.loop?.body ?? loopOp.body };
  const body = patch.top ? patch.top(loop) : [pmOp, pnOp, zeroOp, loop, storeOp];
  return { ...gemm, kernel: { ...gemm.kernel, body } };
}

let nextId = 10_000;
const index = (name: string): IndexValue => ({ id: nextId++, name, type: { kind: 'index' } });
const tile = (name: string, shape: Shape, dtype: DType = 'f32'): TileValue => ({ id: nextId++, name, type: { kind: 'tile', shape, dtype } });
/** The same value (same id and name) with another type. */
const retyped = (v: TileValue, shape: Shape, dtype: DType = v.type.dtype): TileValue => ({ ...v, type: { kind: 'tile', shape, dtype } });

const load = (result: TileValue, tensor = 'A', offsets: AffineLike[] = [0, 0]): LoadOp => ({ op: 'load', result, tensor, offsets: offsets.map(affine) });
const store = (value: TileValue, tensor = 'A', offsets: AffineLike[] = [0, 0]): StoreOp => ({ op: 'store', value, tensor, offsets: offsets.map(affine) });
const constant = (result: TileValue, value = 0): ConstantOp => ({ op: 'constant', result, value });

/** A one-rank module over `@A: 64x64xf32` and `@H: 64x64xf16` whose kernel body is `body`. */
function kernelOf(body: Op[], grid: number[] = [1]): Module {
  return {
    name: 't',
    ranks: 1,
    tensors: [
      { name: 'A', shape: [64, 64], dtype: 'f32', distribution: { kind: 'replicated' } },
      { name: 'H', shape: [64, 64], dtype: 'f16', distribution: { kind: 'replicated' } },
    ],
    chunks: [],
    kernel: { name: 'k', grid, scheduler: { order: { kind: 'row-major' } }, body },
  };
}

/** Two ranks; `@A: 4x4` sharded on rows; chunk `%c0` moves rank 0's rows to rank 1; the kernel waits on it. */
const withChunk = buildModule('ag', { ranks: 2 }, (mb) => {
  const A = mb.tensor('A', [4, 4], 'f32', sharded(0));
  const c0 = mb.chunk({ tensor: 'A', region: { lo: [0, 0], hi: [2, 4] }, src: 0, dst: 1, step: 0 });
  mb.kernel('k', [1], (kb) => {
    kb.wait(c0);
    const x = kb.load(A, [0, 0], [4, 4], 'x');
    kb.store(A, [0, 0], x);
    kb.arrive(c0);
  });
});
const chunk0 = withChunk.chunks[0]!;
const withChunkDecl = (patch: Partial<ChunkDecl>): Module => ({ ...withChunk, chunks: [{ ...chunk0, ...patch }] });

/** Verifies `m`, expecting exactly one diagnostic, with this code, op and value; returns it. */
function onlyError(m: Module, code: string, op: Diagnostic['op'], value?: string): Diagnostic {
  const ds = verify(m);
  expect(ds, ds.map((d) => d.message).join('\n')).toHaveLength(1);
  const d = ds[0]!;
  expect(d).toMatchObject({ severity: 'error', code, op });
  expect(d.value).toBe(value);
  return d;
}

// ---- valid modules -------------------------------------------------------------------------------

describe('verify: valid modules', () => {
  it('the example GEMM verifies clean', () => {
    expect(verify(gemm)).toEqual([]);
    expect(verify(gemmKernel({ m: 100, n: 70, k: 50 }, { ranks: 2, distribute: 'ag' }))).toEqual([]);
    expect(verify(gemmKernel({ m: 128, n: 128, k: 64, dtype: 'f16' }, { ranks: 4, distribute: 'rs' }))).toEqual([]);
  });

  it('a module with chunks, waits and arrives verifies clean', () => {
    expect(verify(withChunk)).toEqual([]);
  });

  it('maps, reduces, casts and broadcasts verify clean', () => {
    const m = buildModule('misc', {}, (mb) => {
      const A = mb.tensor('A', [64, 64], 'f32');
      const H = mb.tensor('H', [64, 64], 'f16');
      mb.kernel('k', [2, 2, 2], (kb) => {
        const x = kb.load(A, [0, 0], [64, 64]);
        const r = kb.reduce('max', x, 1);
        const y = kb.binary('sub', x, r);
        const s = kb.binary('mul', kb.unary('exp', y), kb.constant(2, []));
        kb.store(H, [0, 0], kb.cast(s, 'f16'));
      }, { kind: 'grouped', groupSize: 2 });
    });
    expect(verify(m)).toEqual([]);
  });
});

// ---- module declarations -------------------------------------------------------------------------

describe('verify: module declarations', () => {
  it('ranks must be an integer >= 1', () => {
    const d = onlyError({ ...gemm, ranks: 0 }, 'verify/module', 'module');
    expect(d.message).toMatch(/0 ranks/);
  });

  it('tensor names are unique', () => {
    const d = onlyError({ ...gemm, tensors: [...gemm.tensors, gemm.tensors[0]!] }, 'verify/module', 'tensor');
    expect(d.message).toBe('tensor @A is declared twice');
  });

  it('tensor shapes are positive integers', () => {
    const m = { ...gemm, tensors: [{ ...gemm.tensors[0]!, shape: [128, 0] }, ...gemm.tensors.slice(1)] };
    expect(onlyError(m, 'verify/module', 'tensor').message).toMatch(/@A has shape 128x0/);
  });

  it('a sharded axis is an axis of the tensor', () => {
    const m = { ...gemm, tensors: [{ ...gemm.tensors[0]!, distribution: sharded(2) }, ...gemm.tensors.slice(1)] };
    expect(onlyError(m, 'verify/module', 'tensor').message).toBe('tensor @A is sharded on axis 2, but has rank 2');
  });

  it('a grid has 1 to 3 axes of positive integers', () => {
    const withGrid = (grid: number[]): Module => ({ ...kernelOf([]), kernel: { ...kernelOf([]).kernel, grid } });
    expect(onlyError(withGrid([]), 'verify/module', 'kernel').message).toMatch(/0 axes/);
    expect(onlyError(withGrid([1, 1, 1, 1]), 'verify/module', 'kernel').message).toMatch(/4 axes/);
    expect(onlyError(withGrid([2, 0]), 'verify/module', 'kernel').message).toMatch(/0 tiles on axis 1/);
    expect(onlyError(withGrid([1.5]), 'verify/module', 'kernel').message).toMatch(/1.5 tiles on axis 0/);
  });

  it("the scheduler's order must fit the grid", () => {
    const withOrder = (order: Module['kernel']['scheduler']['order']): Module => ({ ...gemm, kernel: { ...gemm.kernel, scheduler: { order } } });
    expect(onlyError(withOrder({ kind: 'table', tiles: [[0, 0], [0, 1], [1, 0], [1, 0]] }), 'verify/order', 'kernel').message).toMatch(/\(1, 0\) twice/);
    expect(onlyError(withOrder({ kind: 'grouped', groupSize: 0 }), 'verify/order', 'kernel').message).toMatch(/group size/);
    const tables = [[[0, 0], [0, 1], [1, 0], [1, 1]]];
    expect(onlyError(withOrder({ kind: 'rank-table', tables: [...tables, ...tables] }), 'verify/order', 'kernel').message).toMatch(/2 tables, but the module has 1 ranks/);
    expect(verify(withOrder({ kind: 'rank-table', tables }))).toEqual([]);
    const rows = [{ lo: [1, 0], hi: [2, 2] }, { lo: [0, 0], hi: [1, 2] }];
    expect(verify(withOrder({ kind: 'segments', groupSize: 8, ranks: [rows] }))).toEqual([]);
    expect(onlyError(withOrder({ kind: 'segments', groupSize: 8, ranks: [rows, rows] }), 'verify/order', 'kernel').message).toMatch(
      /2 lists of segments, but the module has 1 ranks/,
    );
    expect(onlyError(withOrder({ kind: 'segments', groupSize: 8, ranks: [rows.slice(1)] }), 'verify/order', 'kernel').message).toMatch(
      /rank 0: segments cover 2 of the 4 tiles .* tile \(1, 0\) is missing/,
    );
  });
});

describe('verify: chunk declarations', () => {
  it('the tensor exists', () => {
    const d = onlyError(withChunkDecl({ tensor: 'Q' }), 'verify/unknown-tensor', 'chunk', 'c0');
    expect(d.message).toMatch(/@Q/);
  });

  it('the region has the tensor rank and lies inside it, non-empty, on integers', () => {
    expect(onlyError(withChunkDecl({ region: { lo: [0], hi: [2] } }), 'verify/chunk', 'chunk', 'c0').message).toBe('region [0:2] has rank 1, but @A has rank 2');
    expect(onlyError(withChunkDecl({ region: { lo: [0, 0], hi: [2, 5] } }), 'verify/chunk', 'chunk', 'c0').message).toMatch(/axis 1 range 0:5 must satisfy 0 <= lo < hi <= 4/);
    expect(onlyError(withChunkDecl({ region: { lo: [2, 0], hi: [2, 4] } }), 'verify/chunk', 'chunk', 'c0').message).toMatch(/axis 0 range 2:2/);
    expect(onlyError(withChunkDecl({ region: { lo: [-1, 0], hi: [2, 4] } }), 'verify/chunk', 'chunk', 'c0').message).toMatch(/axis 0/);
    expect(onlyError(withChunkDecl({ region: { lo: [0.5, 0], hi: [2, 4] } }), 'verify/chunk', 'chunk', 'c0').message).toMatch(/axis 0/);
  });

  it('source and destination are distinct ranks of the module', () => {
    expect(onlyError(withChunkDecl({ src: 2 }), 'verify/chunk', 'chunk', 'c0').message).toBe('source rank 2 is not a rank in [0, 2)');
    expect(onlyError(withChunkDecl({ dst: -1 }), 'verify/chunk', 'chunk', 'c0').message).toBe('destination rank -1 is not a rank in [0, 2)');
    expect(onlyError(withChunkDecl({ dst: 0 }), 'verify/chunk', 'chunk', 'c0').message).toBe('source and destination are both rank 0');
  });

  it('the step is an integer >= 0; kind and backend are known', () => {
    expect(onlyError(withChunkDecl({ step: -1 }), 'verify/chunk', 'chunk', 'c0').message).toMatch(/step -1/);
    expect(onlyError(withChunkDecl({ step: 0.5 }), 'verify/chunk', 'chunk', 'c0').message).toMatch(/step 0.5/);
    expect(onlyError(withChunkDecl({ kind: 'move' as never }), 'verify/chunk', 'chunk', 'c0').message).toMatch(/kind 'move'/);
    expect(onlyError(withChunkDecl({ backend: 'tcp' as never }), 'verify/chunk', 'chunk', 'c0').message).toMatch(/backend 'tcp'/);
  });
});

// ---- SSA -----------------------------------------------------------------------------------------

describe('verify: SSA', () => {
  it('a value id is defined once', () => {
    const x = tile('x', [64, 64]);
    const d = onlyError(kernelOf([load(x), load(x)]), 'verify/redefined-value', 'load', 'x');
    expect(d.message).toBe('%x is defined twice: value id ' + x.id + ' is already defined by load');
  });

  it('a value name is taken once', () => {
    const x = tile('x', [64, 64]);
    const d = onlyError(kernelOf([load(x), load(tile('x', [64, 64]))]), 'verify/redefined-value', 'load', 'x');
    expect(d.message).toMatch(/name %x is already taken/);
  });

  it('a chunk value is not redefined by an op either', () => {
    const clash = { ...tile('x2', [4, 4]), id: chunk0.value.id, name: 'c0' };
    const m = { ...withChunk, kernel: { ...withChunk.kernel, body: [...withChunk.kernel.body, load(clash)] } };
    onlyError(m, 'verify/redefined-value', 'load', 'c0');
  });

  it('an operand must be defined', () => {
    const d = onlyError(kernelOf([store(tile('ghost', [64, 64]))]), 'verify/undefined-value', 'store', 'ghost');
    expect(d.message).toBe('%ghost is not defined');
  });

  it('an operand must be defined before its use', () => {
    const x = tile('x', [64, 64]);
    const d = onlyError(kernelOf([store(x), load(x)]), 'verify/undefined-value', 'store', 'x');
    expect(d.message).toBe('%x is used before it is defined');
  });

  it('values of a loop body are not visible after the loop', () => {
    const m = gemmWith({ top: (loop) => [pmOp, pnOp, zeroOp, loop, { ...storeOp, value: dotOp.result }] });
    const d = onlyError(m, 'verify/undefined-value', 'store', 'd');
    expect(d.message).toBe('%d is defined inside the loop over %k and is not visible outside it');
    // Nor are its induction variable and iter args.
    const useIv = gemmWith({ top: (loop) => [pmOp, pnOp, zeroOp, loop, { ...storeOp, offsets: [affine(loop.inductionVar), affine(0)] }] });
    expect(onlyError(useIv, 'verify/undefined-value', 'store', 'acc_out').message).toBe('%k is the induction variable of its loop and is not visible outside it');
  });

  it("an operand's type equals its definition's", () => {
    const d = onlyError(gemmWith({ top: (loop) => [pmOp, pnOp, zeroOp, loop, { ...storeOp, value: retyped(storeOp.value, [64, 32]) }] }), 'verify/type', 'store', 'acc_out');
    expect(d.message).toBe('%acc_out is used as tile<64x32xf32> but defined as tile<64x64xf32>');
  });

  it('an operand has the kind the op needs', () => {
    const i = index('i');
    const pid: ProgramIdOp = { op: 'program_id', result: i, axis: 0 };
    const asTile = { ...i, type: { kind: 'tile', shape: [64, 64], dtype: 'f32' } } as TileValue;
    // Using the index %i as a tile: its use-site type differs from its definition.
    expect(onlyError(kernelOf([pid, store(asTile)]), 'verify/type', 'store', 'i').message).toMatch(/used as tile<64x64xf32> but defined as index/);
    const x = tile('x', [64, 64]);
    const d = onlyError(kernelOf([load(x), store(x, 'A', [x as unknown as IndexValue, 0])]), 'verify/type', 'store', 'x');
    expect(d.message).toBe('store needs an index here, but %x is a tile');
  });

  it('a result has the kind and a well-formed type', () => {
    expect(onlyError(kernelOf([{ op: 'program_id', result: tile('p', [1]) as never, axis: 0 }]), 'verify/type', 'program_id', 'p').message).toMatch(/%p must be an index/);
    expect(onlyError(kernelOf([constant(tile('z', [0, 4]))]), 'verify/shape', 'constant', 'z').message).toMatch(/shape 0x4/);
    expect(onlyError(kernelOf([constant(tile('z', [4], 'f64' as DType))]), 'verify/dtype', 'constant', 'z').message).toMatch(/unknown dtype 'f64'/);
  });

  it('reports every error, but one per bad operand (no cascade)', () => {
    // A dot on an undefined %a: only the undefined value is reported, not a shape or type problem.
    const m = gemmWith({ loopBody: [loadB, { ...dotOp, a: tile('nowhere', [3, 3, 3], 'f16') }, yieldOp] });
    expect(onlyError(m, 'verify/undefined-value', 'dot', 'd').message).toBe('%nowhere is not defined');
    // Two independent errors: both reported.
    const two = kernelOf([{ op: 'program_id', result: index('p'), axis: 5 }, store(tile('ghost', [64, 64]))]);
    expect(verify(two).map((d) => d.code)).toEqual(['verify/program-id', 'verify/undefined-value']);
  });

  it('diagnostics carry the op source location', () => {
    const m = kernelOf([{ ...store(tile('ghost', [64, 64])), loc: { line: 3, column: 5 } }]);
    expect(verify(m)[0]?.loc).toEqual({ line: 3, column: 5 });
  });

  it('reports an unknown op', () => {
    const d = onlyError(kernelOf([{ op: 'frobnicate' } as unknown as Op]), 'verify/unknown-op', 'kernel');
    expect(d.message).toBe("unknown op 'frobnicate'");
  });
});

// ---- ops -----------------------------------------------------------------------------------------

describe('verify: program_id and constant', () => {
  it('program_id: the axis is an axis of the grid', () => {
    const m = gemmWith({ top: (loop) => [pmOp, { ...pnOp, axis: 2 }, zeroOp, loop, storeOp] });
    expect(onlyError(m, 'verify/program-id', 'program_id', 'pn').message).toBe('axis 2 is not an axis of the 2-D grid [2, 2]');
  });

  it('constant: any number is fine', () => {
    for (const value of [0, -1.5, Infinity, -Infinity, NaN]) expect(verify(kernelOf([constant(tile('z', [4]), value)]))).toEqual([]);
  });
});

describe('verify: load and store', () => {
  it('the tensor exists', () => {
    const x = tile('x', [64, 64]);
    expect(onlyError(kernelOf([load(x, 'Q')]), 'verify/unknown-tensor', 'load', 'x').message).toBe('@Q is not a tensor of the module');
    expect(onlyError(kernelOf([load(x), store(x, 'Q')]), 'verify/unknown-tensor', 'store', 'x').message).toMatch(/@Q/);
  });

  it('one offset per tensor axis', () => {
    const d = onlyError(kernelOf([load(tile('x', [64, 64]), 'A', [0])]), 'verify/rank', 'load', 'x');
    expect(d.message).toBe('@A has rank 2, but 1 offset is given');
  });

  it('the tile has the tensor rank', () => {
    const x = tile('x', [64, 64, 1]);
    expect(onlyError(kernelOf([load(x)]), 'verify/rank', 'load', 'x').message).toBe('%x is 64x64x1 (rank 3), but @A has rank 2');
    const y = tile('y', [64]);
    expect(onlyError(kernelOf([constant(y), store(y, 'A')]), 'verify/rank', 'store', 'y').message).toMatch(/%y is 64 \(rank 1\)/);
  });

  it('dtypes follow the tensor', () => {
    const x = tile('x', [64, 64], 'f16');
    expect(onlyError(kernelOf([load(x, 'A')]), 'verify/dtype', 'load', 'x').message).toBe("@A holds f32, but %x is f16; a load keeps the tensor's dtype");
    const y = tile('y', [64, 64]);
    expect(onlyError(kernelOf([load(y, 'A'), store(y, 'H')]), 'verify/dtype', 'store', 'y').message).toBe('%y is f32, but @H holds f16; cast it first');
  });

  it('affine terms use index values in scope', () => {
    const m = gemmWith({ loopBody: [{ ...loadA, offsets: [mul(index('pq'), 64), affine(loopOp.inductionVar)] }, loadB, dotOp, yieldOp] });
    expect(onlyError(m, 'verify/undefined-value', 'load', 'a').message).toBe('%pq is not defined');
  });

  it('out-of-range offsets are fine (loads and stores are masked)', () => {
    const x = tile('x', [64, 64]);
    expect(verify(kernelOf([load(x, 'A', [1000, -5]), store(x, 'A', [-64, 64])]))).toEqual([]);
  });
});

describe('verify: dot', () => {
  /** The GEMM loop with `%b` loaded at another type. */
  const withB = (shape: Shape, dtype: DType = 'f32'): Module => {
    const b = retyped(loadB.result, shape, dtype);
    return gemmWith({ loopBody: [loadA, { ...loadB, result: b }, { ...dotOp, b }, yieldOp] });
  };

  it('inner dimensions agree', () => {
    const d = onlyError(withB([16, 64]), 'verify/shape', 'dot', 'd');
    expect(d.message).toBe('inner dimensions differ: %a is 64x32, %b is 16x64');
  });

  it('operands are 2-D', () => {
    const m = withB([32, 64, 1]);
    const ds = verify(m);
    // The load of a rank-3 tile from a rank-2 tensor is an error of its own; the dot reports the rank.
    expect(ds.map((d) => [d.code, d.op, d.value])).toEqual([
      ['verify/rank', 'load', 'b'],
      ['verify/rank', 'dot', 'd'],
    ]);
    expect(ds[1]!.message).toBe('%b must be a 2-D tile, but is 32x64x1 (rank 3)');
  });

  it('operands share a dtype', () => {
    const b = tile('bh', [32, 64], 'f16');
    const m = gemmWith({ loopBody: [loadA, { ...loadB, tensor: 'H', result: b }, { ...dotOp, b }, yieldOp] });
    const withH = { ...m, tensors: [...m.tensors, { name: 'H', shape: [64, 128], dtype: 'f16' as const, distribution: { kind: 'replicated' as const } }] };
    expect(onlyError(withH, 'verify/dtype', 'dot', 'd').message).toBe('operands have different dtypes: %a is f32, %bh is f16');
  });

  it('the accumulator is [M, N] f32', () => {
    const wrongShape = tile('acc2', [64, 32]);
    const m = gemmWith({ loopBody: [loadA, loadB, constant(wrongShape), { ...dotOp, acc: wrongShape }, yieldOp] });
    expect(onlyError(m, 'verify/shape', 'dot', 'd').message).toBe('the accumulator %acc2 is 64x32, but %a·%b is 64x64');
    const f16 = tile('acc3', [64, 64], 'f16');
    const m2 = gemmWith({ loopBody: [loadA, loadB, constant(f16), { ...dotOp, acc: f16 }, yieldOp] });
    expect(onlyError(m2, 'verify/dtype', 'dot', 'd').message).toBe('the accumulator %acc3 is f16; dot accumulates in f32');
  });

  it('the result is [M, N] f32', () => {
    const x = tile('x', [64, 32]);
    const y = tile('y', [32, 16]);
    const dot = (result: TileValue): DotOp => ({ op: 'dot', result, a: x, b: y });
    expect(onlyError(kernelOf([load(x), load(y), dot(tile('r', [64, 64]))]), 'verify/shape', 'dot', 'r').message).toBe('the result %r is 64x64, but %x·%y is 64x16');
    expect(onlyError(kernelOf([load(x), load(y), dot(tile('r', [64, 16], 'f16'))]), 'verify/dtype', 'dot', 'r').message).toBe('the result %r is f16; dot accumulates in f32');
  });
});

describe('verify: map, reduce, cast', () => {
  const x = tile('x', [64, 64]);
  const h = tile('h', [64, 64], 'f16');
  const row = tile('row', [1, 64]);
  const base: Op[] = [load(x), load(h, 'H'), constant(row)];
  const map = (fn: string, operands: TileValue[], result: TileValue): Op => ({ op: 'map', fn: fn as never, operands, result });

  it('the base verifies', () => {
    expect(verify(kernelOf([...base, map('add', [x, row], tile('ok', [64, 64]))]))).toEqual([]);
  });

  it('unary functions take one operand, binary two', () => {
    expect(onlyError(kernelOf([...base, map('exp', [x, x], tile('r', [64, 64]))]), 'verify/type', 'map', 'r').message).toBe('exp takes 1 operand, but 2 are given');
    expect(onlyError(kernelOf([...base, map('max', [x], tile('r', [64, 64]))]), 'verify/type', 'map', 'r').message).toBe('max takes 2 operands, but 1 are given');
    expect(onlyError(kernelOf([...base, map('pow', [x, x], tile('r', [64, 64]))]), 'verify/type', 'map', 'r').message).toMatch(/unknown map function 'pow'/);
  });

  it('operands share a dtype, which the result keeps', () => {
    expect(onlyError(kernelOf([...base, map('add', [x, h], tile('r', [64, 64]))]), 'verify/dtype', 'map', 'r').message).toBe('operands have different dtypes: %x is f32, %h is f16');
    expect(onlyError(kernelOf([...base, map('neg', [x], tile('r', [64, 64], 'f16'))]), 'verify/dtype', 'map', 'r').message).toBe('%r is f16, but its operands are f32');
  });

  it('operands broadcast to the result shape', () => {
    const narrow = tile('narrow', [64, 2]);
    expect(onlyError(kernelOf([...base, constant(narrow), map('add', [x, narrow], tile('r', [64, 64]))]), 'verify/shape', 'map', 'r').message).toBe('operand shapes do not broadcast: %x is 64x64, %narrow is 64x2');
    expect(onlyError(kernelOf([...base, map('mul', [row, row], tile('r', [64, 64]))]), 'verify/shape', 'map', 'r').message).toBe('%r is 64x64, but the operands broadcast to 1x64');
  });

  it('reduce: the axis exists and stays with size 1', () => {
    const reduce = (axis: number, result: TileValue): Op => ({ op: 'reduce', fn: 'sum', value: x, axis, result });
    expect(verify(kernelOf([...base, reduce(0, tile('r', [1, 64]))]))).toEqual([]);
    expect(onlyError(kernelOf([...base, reduce(2, tile('r', [64, 64]))]), 'verify/rank', 'reduce', 'r').message).toBe('axis 2 is not an axis of %x, which is 64x64 (rank 2)');
    expect(onlyError(kernelOf([...base, reduce(1, tile('r', [64]))]), 'verify/shape', 'reduce', 'r').message).toBe('%r is 64, but reducing axis 1 of %x (64x64) gives 64x1');
    expect(onlyError(kernelOf([...base, reduce(1, tile('r', [64, 1], 'f16'))]), 'verify/dtype', 'reduce', 'r').message).toBe('%r is f16, but its operands are f32');
  });

  it('cast keeps the shape', () => {
    const cast = (result: TileValue): Op => ({ op: 'cast', value: x, result });
    expect(verify(kernelOf([...base, cast(tile('r', [64, 64], 'f16'))]))).toEqual([]);
    expect(onlyError(kernelOf([...base, cast(tile('r', [64, 32], 'f16'))]), 'verify/shape', 'cast', 'r').message).toBe('a cast keeps the shape, but %x is 64x64 and %r is 64x32');
  });
});

describe('verify: for and yield', () => {
  it('the step is a positive integer', () => {
    expect(onlyError(gemmWith({ loop: { step: 0 } }), 'verify/loop', 'for', 'k').message).toBe('step 0 must be a positive integer');
    expect(onlyError(gemmWith({ loop: { step: 2.5 } }), 'verify/loop', 'for', 'k').message).toBe('step 2.5 must be a positive integer');
  });

  it('bounds are affine over values in scope (not the induction variable itself)', () => {
    const d = onlyError(gemmWith({ loop: { upper: affine(loopOp.inductionVar) } }), 'verify/undefined-value', 'for', 'k');
    expect(d.message).toBe('%k is used before it is defined');
    expect(verify(gemmWith({ loop: { upper: mul(pmOp.result, 32) } }))).toEqual([]);
  });

  it('inits, iter args and results match in number', () => {
    const extra = tile('extra_out', [64, 64]);
    const d = onlyError(gemmWith({ loop: { results: [...loopOp.results, extra] } }), 'verify/loop', 'for', 'k');
    expect(d.message).toBe('the loop over %k has 1 init(s), 1 iter arg(s) and 2 result(s); they must match one to one');
  });

  it('inits, iter args and results match in type', () => {
    const init = tile('acc16', [64, 64], 'f16');
    const m = gemmWith({ top: (loop) => [pmOp, pnOp, constant(init), loop, storeOp], loop: { inits: [init] } });
    expect(onlyError(m, 'verify/type', 'for', 'acc16').message).toBe('%acc16 is tile<64x64xf16>, but the iter arg %acc_it it pairs with is tile<64x64xf32>');
  });

  it('the body ends with a yield', () => {
    const d = onlyError(gemmWith({ loopBody: [loadA, loadB, dotOp] }), 'verify/yield', 'for', 'k');
    expect(d.message).toBe('the body of the loop over %k must end with a yield of its 1 carried value(s)');
  });

  it('the yield passes values of the carried types', () => {
    const m = gemmWith({ loopBody: [loadA, loadB, dotOp, { op: 'yield', values: [loadA.result] }] });
    expect(onlyError(m, 'verify/yield', 'yield', 'a').message).toBe('yields %a (tile<64x32xf32>) for the iter arg %acc_it (tile<64x64xf32>) of the loop over %k');
    const two = gemmWith({ loopBody: [loadA, loadB, dotOp, { op: 'yield', values: [dotOp.result, dotOp.result] }] });
    expect(onlyError(two, 'verify/yield', 'yield', 'd').message).toBe('yield passes 2 value(s), but the loop over %k carries 1');
  });

  it('a yield appears only at the end of a loop body', () => {
    const mid = gemmWith({ loopBody: [loadA, loadB, dotOp, yieldOp, yieldOp] });
    expect(onlyError(mid, 'verify/yield', 'yield', 'd').message).toBe('yield in the middle of a loop body; yield must be its last op');
    // A misplaced yield of a value not yet defined: two problems, both reported.
    const early = gemmWith({ loopBody: [loadA, yieldOp, loadB, dotOp, yieldOp] });
    expect(verify(early).map((d) => [d.code, d.message])).toEqual([
      ['verify/undefined-value', '%d is used before it is defined'],
      ['verify/yield', 'yield in the middle of a loop body; yield must be its last op'],
    ]);
    const top = gemmWith({ top: (loop) => [pmOp, pnOp, zeroOp, loop, storeOp, { op: 'yield', values: [] }] });
    expect(onlyError(top, 'verify/yield', 'yield').message).toBe('yield at the kernel top level; yield only ends a loop body');
  });

  it('nested loops see the outer loop values; the outer body does not see the inner ones', () => {
    const j = index('j');
    const inner: ForOp = { op: 'for', results: [], inductionVar: j, lower: affine(0), upper: affine(loopOp.inductionVar), step: 1, iterArgs: [], inits: [], body: [{ ...store(loadA.result, 'A', [j, 0]) }, { op: 'yield', values: [] }] };
    expect(verify(gemmWith({ loopBody: [loadA, inner, loadB, dotOp, yieldOp] }))).toEqual([]);
    const afterInner = gemmWith({ loopBody: [loadA, inner, store(loadA.result, 'A', [j, 0]), loadB, dotOp, yieldOp] });
    expect(onlyError(afterInner, 'verify/undefined-value', 'store', 'a').message).toBe('%j is the induction variable of its loop and is not visible outside it');
  });
});

describe('verify: wait and arrive', () => {
  const withBody = (body: Op[]): Module => ({ ...withChunk, kernel: { ...withChunk.kernel, body } });

  it('the chunk is declared by the module', () => {
    const ghost = { id: 9_999, name: 'c9', type: { kind: 'chunk' as const } };
    expect(onlyError(withBody([{ op: 'wait', chunk: ghost }]), 'verify/undefined-value', 'wait', 'c9').message).toBe('%c9 is not a chunk declared by the module');
    expect(onlyError(withBody([{ op: 'arrive', chunk: ghost }]), 'verify/undefined-value', 'arrive', 'c9').message).toBe('%c9 is not a chunk declared by the module');
  });

  it('the operand is a chunk', () => {
    const x = tile('x9', [4, 4]);
    const d = onlyError(withBody([load(x), { op: 'wait', chunk: x as never }]), 'verify/type', 'wait', 'x9');
    expect(d.message).toBe('wait needs a chunk here, but %x9 is a tile');
  });

  it('chunk values are visible inside loops; guards use values in scope', () => {
    const k = index('kk');
    const loop: ForOp = { op: 'for', results: [], inductionVar: k, lower: affine(0), upper: affine(4), step: 1, iterArgs: [], inits: [], body: [{ op: 'wait', chunk: chunk0.value, guard: [{ expr: affine(k), lo: 0, hi: 2 }] }, { op: 'yield', values: [] }] };
    expect(verify(withBody([loop]))).toEqual([]);
    const guarded = withBody([{ op: 'arrive', chunk: chunk0.value, guard: [{ expr: affine(index('nope')), lo: 0, hi: 1 }] }]);
    expect(onlyError(guarded, 'verify/undefined-value', 'arrive', 'c0').message).toBe('%nope is not defined');
  });
});
