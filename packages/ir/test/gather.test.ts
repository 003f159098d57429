// The gather op: built, printed, parsed back, and checked by the verifier.
import { describe, expect, it } from 'vitest';
import { buildModule, IRParseError, IRVerifyError, mul, parse, print, verify, type GatherOp, type Module, type Op } from '../src/index.js';

/** An embedding bag: for each of 4 lookups, gather the rows of @E named by a column of @I, and sum. */
function embeddingBag(): Module {
  return buildModule('bag', { ranks: 1 }, (mb) => {
    const E = mb.tensor('E', [100, 64], 'f32');
    const I = mb.tensor('I', [32, 4], 'f32');
    const P = mb.tensor('P', [32, 64], 'f32');
    mb.kernel('bag', [2, 2], (kb) => {
      const pm = kb.programId(0, 'pm');
      const pn = kb.programId(1, 'pn');
      const [acc] = kb.for(0, 4, 1, [kb.zeros([16, 32], 'f32', 'acc')], (l, [acc]) => {
        const idx = kb.load(I, [mul(pm, 16), l], [16, 1], 'idx');
        const rows = kb.gather(E, idx, mul(pn, 32), 32, 'rows');
        return [kb.add(acc, rows, 'sum')];
      }, 'l');
      kb.store(P, [mul(pm, 16), mul(pn, 32)], acc);
    });
  });
}

const BAG_TEXT = `module @bag ranks(1) {
  tensor @E : f32[100, 64] replicated
  tensor @I : f32[32, 4] replicated
  tensor @P : f32[32, 64] replicated
  kernel @bag grid(2, 2) order(row-major) {
    %pm = program_id 0
    %pn = program_id 1
    %acc = constant 0 : tile<16x32xf32>
    %acc_out = for %l = 0 to 4 step 1 iter(%acc_it = %acc) -> (tile<16x32xf32>) {
      %idx = load @I[16*%pm, %l] : tile<16x1xf32>
      %rows = gather @E[%idx, 32*%pn] : tile<16x32xf32>
      %sum = map add %acc_it, %rows : tile<16x32xf32>
      yield %sum
    }
    store %acc_out, @P[16*%pm, 32*%pn]
  }
}
`;

function stripLocs<T>(x: T): T {
  if (Array.isArray(x)) return x.map(stripLocs) as T;
  if (x !== null && typeof x === 'object') {
    return Object.fromEntries(Object.entries(x).filter(([k]) => k !== 'loc').map(([k, v]) => [k, stripLocs(v)])) as T;
  }
  return x;
}

function gatherOf(m: Module): GatherOp {
  const find = (ops: readonly Op[]): GatherOp | undefined =>
    ops.reduce<GatherOp | undefined>((hit, op) => hit ?? (op.op === 'gather' ? op : op.op === 'for' ? find(op.body) : undefined), undefined);
  const g = find(m.kernel.body);
  if (!g) throw new Error('no gather in the module');
  return g;
}

/** The bag module with its gather replaced by `patch(gather)`. */
function withGather(patch: (g: GatherOp) => GatherOp): Module {
  const m = parse(BAG_TEXT);
  const swap = (ops: readonly Op[]): Op[] => ops.map((op) => (op.op === 'gather' ? patch(op) : op.op === 'for' ? { ...op, body: swap(op.body) } : op));
  return { ...m, kernel: { ...m.kernel, body: swap(m.kernel.body) } };
}

describe('gather: builder and textual form', () => {
  it('builds a [BM, BN] tile of the tensor dtype, indexed by the loaded column', () => {
    const g = gatherOf(embeddingBag());
    expect(g.result.type).toEqual({ kind: 'tile', shape: [16, 32], dtype: 'f32' });
    expect(g.index.name).toBe('idx');
    expect(g.tensor).toBe('E');
    expect(g.column.terms.map((t) => [t.value.name, t.coeff])).toEqual([['pn', 32]]);
  });

  it('prints as `gather @E[%idx, col]` and parses back to the same module', () => {
    const m = embeddingBag();
    expect(print(m)).toBe(BAG_TEXT);
    const back = parse(BAG_TEXT);
    expect(stripLocs(back)).toEqual(m);
    expect(print(back)).toBe(BAG_TEXT);
    expect(verify(back)).toEqual([]);
  });

  it('parses a rank-1 index and a constant column, and prints them back', () => {
    const text = BAG_TEXT.replace('%idx = load @I[16*%pm, %l] : tile<16x1xf32>', '%idx = constant 3 : tile<16xf32>').replace('[%idx, 32*%pn]', '[%idx, 7]');
    const m = parse(text);
    expect(print(m)).toBe(text);
    expect(gatherOf(m).index.type.shape).toEqual([16]);
    expect(verify(m)).toEqual([]);
  });

  it('reports malformed gathers with the position and what was expected', () => {
    const at = (text: string): IRParseError => {
      try {
        parse(text);
      } catch (e) {
        if (e instanceof IRParseError) return e;
        throw e;
      }
      throw new Error('parsed');
    };
    const noComma = at(BAG_TEXT.replace('[%idx, 32*%pn]', '[%idx 32*%pn]'));
    expect(noComma.message).toMatch(/^11:\d+: expected ',' between the gather's index and its column offset, found '32'/);
    const twoColumns = at(BAG_TEXT.replace('[%idx, 32*%pn]', '[%idx, 32*%pn, 0]'));
    expect(twoColumns.message).toMatch(/expected '\]' after the gather's column offset, found ','/);
    const indexNotTile = at(BAG_TEXT.replace('[%idx, 32*%pn]', '[%pm, 32*%pn]'));
    expect(indexNotTile.message).toMatch(/expected a tile value \(%name\), found '%pm'/);
  });
});

describe('gather: verifier', () => {
  const only = (m: Module, code: string, message: RegExp) => {
    const ds = verify(m);
    expect(ds.map((d) => d.message)).toHaveLength(1);
    expect(ds[0]).toMatchObject({ code, op: 'gather', value: 'rows' });
    expect(ds[0]!.message).toMatch(message);
  };

  it('rejects an unknown tensor', () => {
    only(withGather((g) => ({ ...g, tensor: 'Q' })), 'verify/unknown-tensor', /@Q is not a tensor/);
  });

  it('rejects a tensor that is not 2-D', () => {
    const m = withGather((g) => g);
    const flat = { ...m, tensors: m.tensors.map((t) => (t.name === 'E' ? { ...t, shape: [6400] } : t)) };
    only(flat, 'verify/rank', /gather reads rows of a 2-D tensor, but @E has rank 1/);
  });

  it('rejects an index that is not a column, and a result whose rows differ from it', () => {
    // Retyped where it is loaded, so that only the gather's rule fails.
    const wideIndex = parse(BAG_TEXT.replace('tile<16x1xf32>', 'tile<16x2xf32>'));
    only(wideIndex, 'verify/shape', /the index %idx is 16x2 \(rank 2\); a gather's index is \[BM\] or \[BM, 1\]/);
    // The gathered tile is left unused, so that its wrong type trips no other op.
    const fewerRows = parse(
      BAG_TEXT.replace('%rows = gather @E[%idx, 32*%pn] : tile<16x32xf32>', '%rows = gather @E[%idx, 32*%pn] : tile<8x32xf32>').replace('%acc_it, %rows', '%acc_it, %acc_it'),
    );
    only(fewerRows, 'verify/shape', /%rows is .*8.*32.*, but the index %idx picks 16 rows: the result is \[16, BN\]/);
  });

  it('rejects an index that is not f32, and a result of another dtype than the tensor', () => {
    const f16Index = parse(BAG_TEXT.replace('tensor @I : f32[32, 4]', 'tensor @I : f16[32, 4]').replace('tile<16x1xf32>', 'tile<16x1xf16>'));
    only(f16Index, 'verify/dtype', /the index %idx is f16; gather indices are f32/);
    const f16Table = parse(BAG_TEXT.replace('tensor @E : f32[100, 64]', 'tensor @E : f16[100, 64]'));
    only(f16Table, 'verify/dtype', /@E holds f16, but %rows is f32; a gather keeps the tensor's dtype/);
  });

  it('the builder refuses a module whose gather does not verify', () => {
    expect(() =>
      buildModule('bad', { ranks: 1 }, (mb) => {
        const E = mb.tensor('E', [10, 8], 'f32');
        mb.kernel('k', [1], (kb) => {
          const idx = kb.constant(1, [4, 1], 'f32', 'idx');
          kb.gather({ name: 'Nope', dtype: 'f32', rank: 2 }, idx, 0, 8, 'rows');
          kb.store(E, [0, 0], kb.zeros([4, 8]));
        });
      }),
    ).toThrow(IRVerifyError);
  });
});
