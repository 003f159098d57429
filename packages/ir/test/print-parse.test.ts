import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { gemmKernel, IRParseError, parse, print, verify, type Module, type Op } from '../src/index.js';
import { arbModule } from './arbitrary.js';

/** A copy of `x` without `loc` keys: the parser records locations, the builder does not. */
function stripLocs<T>(x: T): T {
  if (Array.isArray(x)) return x.map(stripLocs) as T;
  if (x !== null && typeof x === 'object') {
    return Object.fromEntries(Object.entries(x).filter(([k]) => k !== 'loc').map(([k, v]) => [k, stripLocs(v)])) as T;
  }
  return x;
}

function opAt<K extends Op['op']>(ops: readonly Op[], i: number, kind: K): Extract<Op, { op: K }> {
  const op = ops[i];
  if (op?.op !== kind) throw new Error(`expected ${kind} at ${i}, found ${op?.op}`);
  return op as Extract<Op, { op: K }>;
}

function parseError(text: string): IRParseError {
  try {
    parse(text);
  } catch (e) {
    if (e instanceof IRParseError) return e;
    throw e;
  }
  throw new Error('expected an IRParseError, but the text parsed');
}

const AG_GEMM = `module @ag_gemm ranks(4) {
  tensor @A : f32[256, 128] sharded(0)
  tensor @B : f32[128, 256] replicated
  tensor @C : f32[256, 256] partial(sum)
  %c0 = chunk @A[0:64, 0:128] from 0 to 1 step 0 copy via auto
  %c1 = chunk @C[64:128, 0:256] from 2 to 1 step 1 reduce-add via gpu-signal
  kernel @gemm grid(4, 4) order(row-major) {
    %pm = program_id 0
    %pn = program_id 1
    %acc = constant 0 : tile<64x64xf32>
    %acc_out = for %k = 0 to 128 step 32 iter(%acc_it = %acc) -> (tile<64x64xf32>) {
      wait %c0
      %a = load @A[64*%pm, %k] : tile<64x32xf32>
      %b = load @B[%k, 64*%pn] : tile<32x64xf32>
      %d = dot %a, %b, %acc_it : tile<64x64xf32>
      yield %d
    }
    store %acc_out, @C[64*%pm, 64*%pn]
    arrive %c1
  }
}
`;

/** Every other form once, written loosely (comments, terms out of order) to test what parsing accepts. */
const ALL_FORMS = `// a module that uses each remaining form
module @"rs-gemm" ranks(2) {
  tensor @X : f16[64, 64] replicated   // a trailing comment
  tensor @S : f32[] replicated
  kernel @k grid(2, 3) order(table [[0, 0], [1, 0], [0, 1], [1, 1], [0, 2], [1, 2]]) {
    %p = program_id 1
    %inf = constant -Infinity : tile<f32>
    %r0, %r1 = for %i = 0 to %p + 4 step 1 iter(%x = %inf, %y = %inf) -> (tile<f32>, tile<f32>) {
      for %j = -%i + 3 to 2*%i - 3*%p - 1 step 2 {
        yield
      }
      %e = map exp %x : tile<f32>
      %m = map max %e, %y : tile<f32>
      yield %e, %m
    }
    %t = load @X[32 + 64*%p, - 1 - %p] : tile<64x32xf16>
    %u = load @X[0, 0] : tile<32x64xf16>
    %v = dot %t, %u : tile<64x64xf32>
    %s = reduce sum %v axis 1 : tile<64x1xf32>
    %h = cast %s : tile<64x1xf16>
    store %r0, @S[]
  }
}
`;

const GEMM_GOLDEN = `module @gemm ranks(1) {
  tensor @A : f32[128, 64] replicated
  tensor @B : f32[64, 128] replicated
  tensor @C : f32[128, 128] replicated
  kernel @gemm grid(2, 2) order(row-major) {
    %pm = program_id 0
    %pn = program_id 1
    %acc = constant 0 : tile<64x64xf32>
    %acc_out = for %k = 0 to 64 step 32 iter(%acc_it = %acc) -> (tile<64x64xf32>) {
      %a = load @A[64*%pm, %k] : tile<64x32xf32>
      %b = load @B[%k, 64*%pn] : tile<32x64xf32>
      %d = dot %a, %b, %acc_it : tile<64x64xf32>
      yield %d
    }
    store %acc_out, @C[64*%pm, 64*%pn]
  }
}
`;

const EXAMPLES: readonly [string, Module][] = [
  ['local gemm', gemmKernel({ m: 128, n: 128, k: 64 })],
  ['ragged f16 gemm', gemmKernel({ m: 100, n: 72, k: 40, blockM: 32, blockN: 16, blockK: 8, dtype: 'f16' })],
  ['all-gather gemm', gemmKernel({ m: 256, n: 256, k: 128 }, { ranks: 4, distribute: 'ag', name: 'ag_gemm' })],
  ['reduce-scatter gemm', gemmKernel({ m: 256, n: 256, k: 128 }, { ranks: 2, distribute: 'rs', name: 'rs-gemm' })],
];

describe('print', () => {
  it('prints the local GEMM in its golden form', () => {
    expect(print(gemmKernel({ m: 128, n: 128, k: 64 }))).toBe(GEMM_GOLDEN);
  });

  it('prints the canonical form of loosely written text', () => {
    const printed = print(parse(ALL_FORMS));
    expect(printed).toContain('module @"rs-gemm" ranks(2) {');
    expect(printed).toContain('  tensor @S : f32[] replicated\n');
    expect(printed).toContain('    %t = load @X[64*%p + 32, -%p - 1] : tile<64x32xf16>\n');
    expect(printed).toContain('    %r0, %r1 = for %i = 0 to %p + 4 step 1 iter(%x = %inf, %y = %inf) -> (tile<f32>, tile<f32>) {\n');
    expect(printed).toContain('      for %j = -%i + 3 to 2*%i - 3*%p - 1 step 2 {\n        yield\n      }\n');
    expect(printed).toContain('    %v = dot %t, %u : tile<64x64xf32>\n');
    expect(printed).not.toContain('//');
  });

  it('prints every tile order', () => {
    const orders = [
      'row-major',
      'column-major',
      'grouped 8',
      'table [[1, 0], [0, 0]]',
      'rank-table [\n      [[0, 0], [1, 0]],\n      [[1, 0], [0, 0]]\n    ]',
      'segments 8 [\n      [[0:1, 0:1], [1:2, 0:1]],\n      [[0:2, 0:1]]\n    ]',
    ];
    for (const order of orders) {
      const text = `module @m ranks(2) {\n  kernel @k grid(2, 1) order(${order}) {\n  }\n}\n`;
      expect(print(parse(text))).toBe(text);
    }
    const rankTable = parse(`module @m ranks(2) {\n  kernel @k grid(2, 1) order(${orders[4]}) {\n  }\n}\n`);
    expect(rankTable.kernel.scheduler.order).toEqual({ kind: 'rank-table', tables: [[[0, 0], [1, 0]], [[1, 0], [0, 0]]] });
    const segments = parse(`module @m ranks(2) {\n  kernel @k grid(2, 1) order(${orders[5]}) {\n  }\n}\n`);
    expect(segments.kernel.scheduler.order).toEqual({
      kind: 'segments',
      groupSize: 8,
      ranks: [
        [{ lo: [0, 0], hi: [1, 1] }, { lo: [1, 0], hi: [2, 1] }],
        [{ lo: [0, 0], hi: [2, 1] }],
      ],
    });
  });

  it('prints segments one rank per line, boxes written as chunk regions are', () => {
    const m = parse(
      'module @m ranks(2) { kernel @k grid(4, 4) order(segments 2 [[[0:1, 0:4], [1:4, 0:4]], [[3:4, 0:4], [0:3, 0:2], [0:3, 2:4]]]) { } }',
    );
    expect(print(m)).toBe(
      'module @m ranks(2) {\n' +
        '  kernel @k grid(4, 4) order(segments 2 [\n' +
        '      [[0:1, 0:4], [1:4, 0:4]],\n' +
        '      [[3:4, 0:4], [0:3, 0:2], [0:3, 2:4]]\n' +
        '    ]) {\n' +
        '  }\n' +
        '}\n',
    );
  });

  it('quotes names that are not bare words', () => {
    const text = `module @"w-q" ranks(1) {\n  tensor @"x.y" : f32[4] replicated\n  kernel @k grid(1) order(row-major) {\n    %"my value" = constant 1 : tile<4xf32>\n    store %"my value", @"x.y"[0]\n  }\n}\n`;
    const m = parse(text);
    expect([m.name, m.tensors[0]!.name, opAt(m.kernel.body, 0, 'constant').result.name]).toEqual(['w-q', 'x.y', 'my value']);
    expect(opAt(m.kernel.body, 1, 'store').value).toBe(opAt(m.kernel.body, 0, 'constant').result);
    expect(print(m)).toBe(text);
  });

  it('prints constants as String(n) does, and -0 as -0', () => {
    for (const value of ['0', '-1.5', '1e-7', '1e+21', '5e-324', 'Infinity', '-Infinity', 'NaN', '-0']) {
      const text = `module @m ranks(1) {\n  kernel @k grid(1) order(row-major) {\n    %c = constant ${value} : tile<f32>\n  }\n}\n`;
      const c = opAt(parse(text).kernel.body, 0, 'constant');
      expect(Object.is(c.value, Number(value))).toBe(true);
      expect(print(parse(text))).toBe(text);
    }
  });
});

describe('parse', () => {
  const m = parse(AG_GEMM);
  const body = m.kernel.body;

  it('reads the module, tensors and chunks', () => {
    expect(m.name).toBe('ag_gemm');
    expect(m.ranks).toBe(4);
    expect(m.tensors).toEqual([
      { name: 'A', shape: [256, 128], dtype: 'f32', distribution: { kind: 'sharded', axis: 0 } },
      { name: 'B', shape: [128, 256], dtype: 'f32', distribution: { kind: 'replicated' } },
      { name: 'C', shape: [256, 256], dtype: 'f32', distribution: { kind: 'partial', reduce: 'sum' } },
    ]);
    expect(m.chunks[1]).toEqual({
      value: { id: 1, name: 'c1', type: { kind: 'chunk' } },
      tensor: 'C',
      region: { lo: [64, 0], hi: [128, 256] },
      src: 2,
      dst: 1,
      step: 1,
      kind: 'reduce-add',
      backend: 'gpu-signal',
    });
    expect(m.kernel.name).toBe('gemm');
    expect(m.kernel.grid).toEqual([4, 4]);
    expect(m.kernel.scheduler.order).toEqual({ kind: 'row-major' });
  });

  it('reads ops with their types, operands and locations', () => {
    expect(body.map((o) => o.op)).toEqual(['program_id', 'program_id', 'constant', 'for', 'store', 'arrive']);
    const pn = opAt(body, 1, 'program_id');
    expect(pn).toEqual({ op: 'program_id', result: { id: 3, name: 'pn', type: { kind: 'index' } }, axis: 1, loc: { line: 9, column: 5 } });
    const acc = opAt(body, 2, 'constant');
    expect(acc.value).toBe(0);
    expect(acc.result.type).toEqual({ kind: 'tile', shape: [64, 64], dtype: 'f32' });

    const loop = opAt(body, 3, 'for');
    expect(loop.loc).toEqual({ line: 11, column: 5 });
    expect(loop.inductionVar).toEqual({ id: 5, name: 'k', type: { kind: 'index' } });
    expect(loop.lower).toEqual({ constant: 0, terms: [] });
    expect(loop.upper).toEqual({ constant: 128, terms: [] });
    expect(loop.step).toBe(32);
    expect(loop.inits[0]).toBe(acc.result);
    expect(loop.iterArgs[0]).toEqual({ id: 6, name: 'acc_it', type: { kind: 'tile', shape: [64, 64], dtype: 'f32' } });
    expect(loop.results[0]).toEqual({ id: 10, name: 'acc_out', type: { kind: 'tile', shape: [64, 64], dtype: 'f32' } });
    expect(loop.body.map((o) => o.op)).toEqual(['wait', 'load', 'load', 'dot', 'yield']);

    expect(opAt(loop.body, 0, 'wait').chunk).toBe(m.chunks[0]!.value);
    const a = opAt(loop.body, 1, 'load');
    expect(a.loc).toEqual({ line: 13, column: 7 });
    expect(a.tensor).toBe('A');
    expect(a.offsets[0]).toEqual({ constant: 0, terms: [{ value: opAt(body, 0, 'program_id').result, coeff: 64 }] });
    expect(a.offsets[1]!.terms[0]!.value).toBe(loop.inductionVar);
    expect(a.result.type).toEqual({ kind: 'tile', shape: [64, 32], dtype: 'f32' });
    const dot = opAt(loop.body, 3, 'dot');
    expect(dot.a).toBe(a.result);
    expect(dot.acc).toBe(loop.iterArgs[0]);
    expect(opAt(loop.body, 4, 'yield').values).toEqual([dot.result]);

    const store = opAt(body, 4, 'store');
    expect(store.value).toBe(loop.results[0]);
    expect(store.loc).toEqual({ line: 18, column: 5 });
    expect(opAt(body, 5, 'arrive').chunk).toBe(m.chunks[1]!.value);
  });

  it('numbers values in order of definition, a loop after its body', () => {
    const ids = [...m.chunks.map((c) => c.value)];
    const loop = opAt(body, 3, 'for');
    expect(ids.map((v) => v.id)).toEqual([0, 1]);
    expect([opAt(body, 0, 'program_id').result.id, opAt(body, 2, 'constant').result.id]).toEqual([2, 4]);
    expect(opAt(loop.body, 3, 'dot').result.id).toBe(9);
    expect(loop.results[0]!.id).toBe(10);
  });

  it('returns a deep-frozen module', () => {
    expect(Object.isFrozen(m)).toBe(true);
    expect(Object.isFrozen(opAt(body, 3, 'for').body[1])).toBe(true);
    expect(Object.isFrozen(m.chunks[0]!.region.lo)).toBe(true);
  });

  it('prints the text back unchanged', () => {
    expect(print(m)).toBe(AG_GEMM);
  });

  it('reads every other form: quoted names, comments, several carried values, affine terms in any order', () => {
    const all = parse(ALL_FORMS);
    expect(all.name).toBe('rs-gemm');
    expect(all.tensors[1]!.shape).toEqual([]);
    expect(all.kernel.scheduler.order).toEqual({
      kind: 'table',
      tiles: [[0, 0], [1, 0], [0, 1], [1, 1], [0, 2], [1, 2]],
    });
    const ops = all.kernel.body;
    const p = opAt(ops, 0, 'program_id').result;
    expect(opAt(ops, 1, 'constant').value).toBe(-Infinity);
    expect(opAt(ops, 1, 'constant').result.type).toEqual({ kind: 'tile', shape: [], dtype: 'f32' });

    const loop = opAt(ops, 2, 'for');
    expect(loop.results.map((r) => r.name)).toEqual(['r0', 'r1']);
    expect(loop.iterArgs.map((r) => r.name)).toEqual(['x', 'y']);
    expect(loop.upper).toEqual({ constant: 4, terms: [{ value: p, coeff: 1 }] });
    const inner = opAt(loop.body, 0, 'for');
    expect(inner.results).toEqual([]);
    expect(inner.iterArgs).toEqual([]);
    expect(inner.lower).toEqual({ constant: 3, terms: [{ value: loop.inductionVar, coeff: -1 }] });
    expect(inner.upper).toEqual({
      constant: -1,
      terms: [
        { value: loop.inductionVar, coeff: 2 },
        { value: p, coeff: -3 },
      ],
    });
    expect(opAt(inner.body, 0, 'yield').values).toEqual([]);
    const exp = opAt(loop.body, 1, 'map');
    expect([exp.fn, exp.operands]).toEqual(['exp', [loop.iterArgs[0]]]);
    const max = opAt(loop.body, 2, 'map');
    expect(max.operands).toEqual([exp.result, loop.iterArgs[1]]);

    const t = opAt(ops, 3, 'load');
    expect(t.offsets).toEqual([
      { constant: 32, terms: [{ value: p, coeff: 64 }] },
      { constant: -1, terms: [{ value: p, coeff: -1 }] },
    ]);
    expect(t.loc).toEqual({ line: 16, column: 5 });
    const dot = opAt(ops, 5, 'dot');
    expect(dot.acc).toBeUndefined();
    expect('acc' in dot).toBe(false);
    expect(opAt(ops, 6, 'reduce')).toMatchObject({ fn: 'sum', axis: 1, value: dot.result });
    expect(opAt(ops, 7, 'cast').result.type).toEqual({ kind: 'tile', shape: [64, 1], dtype: 'f16' });
    expect(opAt(ops, 8, 'store')).toMatchObject({ value: loop.results[0], tensor: 'S', offsets: [] });
  });
});

describe('round trip', () => {
  it.each(EXAMPLES)('%s: prints, parses and prints the same text and data', (_, module) => {
    const text = print(module);
    const back = parse(text);
    expect(print(back)).toBe(text);
    expect(stripLocs(back)).toEqual(module);
  });

  it('random modules print, parse and print the same text and data', () => {
    fc.assert(
      fc.property(arbModule(), (module) => {
        const text = print(module);
        const back = parse(text);
        expect(print(back)).toBe(text);
        expect(stripLocs(back)).toEqual(module);
      }),
      { numRuns: 200 },
    );
  });

  it('random modules use every form of the IR', () => {
    const seen = new Set<string>();
    const visit = (ops: readonly Op[], depth: number): void => {
      for (const op of ops) {
        seen.add(op.op);
        if (op.op === 'dot') seen.add(op.acc ? 'dot+acc' : 'dot-acc');
        if (op.op === 'map') seen.add(`map/${op.operands.length}`);
        if (op.op === 'for') seen.add(`for/${op.iterArgs.length}/depth${depth}`);
        if (op.op === 'load' || op.op === 'store') {
          for (const e of op.offsets) {
            if (e.terms.length >= 2) seen.add('affine/several-terms');
            if (e.terms.some((t) => t.coeff < 0)) seen.add('affine/negative');
          }
        }
        if (op.op === 'for') visit(op.body, depth + 1);
      }
    };
    for (const m of fc.sample(arbModule(), { numRuns: 300, seed: 7 })) {
      visit(m.kernel.body, 0);
      seen.add(`grid/${m.kernel.grid.length}`);
      seen.add(`order/${m.kernel.scheduler.order.kind}`);
      for (const t of m.tensors) seen.add(`tensor/${t.shape.length}/${t.dtype}/${t.distribution.kind}`);
      for (const c of m.chunks) seen.add(`chunk/${c.kind}/${c.backend}`);
    }
    const expected = [
      ...['program_id', 'constant', 'load', 'store', 'dot+acc', 'dot-acc', 'map/1', 'map/2', 'reduce', 'cast', 'wait', 'arrive', 'yield'],
      ...['for/0/depth0', 'for/1/depth0', 'for/2/depth0', 'for/0/depth1', 'for/1/depth1', 'for/2/depth1'],
      ...['affine/several-terms', 'affine/negative', 'grid/1', 'grid/2', 'grid/3'],
      ...['row-major', 'column-major', 'grouped', 'table', 'rank-table', 'segments'].map((k) => `order/${k}`),
      ...[1, 2, 3].flatMap((r) =>
        ['f32', 'f16'].flatMap((d) => ['replicated', 'sharded', 'partial'].map((k) => `tensor/${r}/${d}/${k}`)),
      ),
      ...['copy', 'reduce-add'].flatMap((k) => ['auto', 'gpu-signal', 'peer-copy'].map((b) => `chunk/${k}/${b}`)),
    ];
    expect(expected.filter((e) => !seen.has(e))).toEqual([]);
  });
});

describe('parse errors', () => {
  /** A module whose kernel body is `lines`; the body starts on line 4. */
  const kernel = (...lines: string[]) =>
    `module @m ranks(2) {\n  tensor @A : f32[4, 4] replicated\n  kernel @k grid(1) order(row-major) {\n${lines.join('\n')}\n  }\n}\n`;

  const cases: [string, string, number, number, string, string][] = [
    ['an unknown dtype in a tile type', kernel('    %x = load @A[0, 0] : tile<4x4xf64>'), 4, 35, 'a dtype (f32 or f16)', "'f64'"],
    ['a bad dimension in a tile type', kernel('    %x = load @A[0, 0] : tile<4xyxf32>'), 4, 33, 'a dimension', "'y'"],
    ['a tile type without a dtype', kernel('    %x = load @A[0, 0] : tile<4x4x>'), 4, 35, 'a dtype (f32 or f16)', "'>'"],
    ['a use of an undefined value', kernel('    store %nope, @A[0, 0]'), 4, 11, 'a defined value', "'%nope'"],
    ['a redefinition', kernel('    %x = program_id 0', '    %x = program_id 0'), 5, 5, 'a value name not defined before', "'%x'"],
    ['a missing =', kernel('    %x program_id 0'), 4, 8, "'=' after a value name", "'program_id'"],
    ['an unknown op', kernel('    %x = frobnicate 0'), 4, 10, 'an op name (rank_id, program_id, constant, load', "'frobnicate'"],
    ['an op without its result', kernel('    load @A[0, 0] : tile<4x4xf32>'), 4, 5, "a result name before 'load'", "'load'"],
    ['a value of the wrong kind', kernel('    %p = program_id 0', '    wait %p'), 5, 10, 'a chunk value', "'%p'"],
    ['a fractional coefficient', kernel('    %p = program_id 0', '    %x = load @A[1.5*%p, 0] : tile<4x4xf32>'), 5, 18, 'an integer coefficient', "'1.5'"],
    ['an unknown character', kernel('    %x = program_id $'), 4, 21, 'a grid axis (an integer)', "'$'"],
    ['a loop result used in its own body', kernel('    %r = for %k = 0 to 4 step 1 iter(%x = %x) -> (tile<f32>) {'), 4, 43, 'a defined value', "'%x'"],
    ['loop results without carried values', kernel('    %c = constant 0 : tile<f32>', '    %r = for %k = 0 to 4 step 1 {', '    }'), 5, 33, "'iter(...)' carrying the loop's results", "'{'"],
    ['too few result types', kernel('    %c = constant 0 : tile<f32>', '    %r, %s = for %k = 0 to 4 step 1 iter(%x = %c, %y = %c) -> (tile<f32>) {'), 5, 60, 'as many result types as carried values (2)', "'->'"],
    ['an unknown tensor dtype', 'module @m ranks(1) {\n  tensor @A : f64[4] replicated\n}\n', 2, 15, 'a dtype (f32 or f16)', "'f64'"],
    ['an unknown chunk kind', 'module @m ranks(2) {\n  tensor @A : f32[4] replicated\n  %c = chunk @A[0:4] from 0 to 1 step 0 move via auto\n}\n', 3, 41, 'a chunk kind (copy or reduce-add)', "'move'"],
    ['a module without a kernel', 'module @m ranks(1) {\n  tensor @A : f32[4] replicated\n}\n', 3, 1, "a declaration ('tensor @name'", "'}'"],
    ['a truncated module', 'module @m ranks(1) {\n  kernel @k grid(1) order(row-major) {\n  }\n', 4, 1, "'}' to close the module", 'end of input'],
    ['a segment box without its bounds', 'module @m ranks(1) {\n  kernel @k grid(2) order(segments 8 [[[0:1], [1]]]) {\n  }\n}\n', 2, 49, "':' between a region's bounds", "']'"],
    ['segments without a group size', 'module @m ranks(1) {\n  kernel @k grid(2) order(segments [[[0:2]]]) {\n  }\n}\n', 2, 36, 'a group size (an integer)', "'['"],
    ['text after the module', 'module @m ranks(1) {\n  kernel @k grid(1) order(row-major) {\n  }\n}\n}', 5, 1, 'end of input after the module', "'}'"],
  ];

  it.each(cases)('%s', (_, text, line, column, expected, found) => {
    const e = parseError(text);
    expect({ line: e.line, column: e.column, found: e.found }).toEqual({ line, column, found });
    expect(e.expected).toContain(expected);
    expect(e.message).toBe(`${line}:${column}: expected ${e.expected}, found ${found}`);
  });
});

describe('parse never fails with anything but IRParseError', () => {
  const corpus = [
    AG_GEMM,
    ALL_FORMS,
    ...EXAMPLES.map(([, m]) => print(m)),
    ...fc.sample(arbModule(), { numRuns: 6, seed: 3 }).map(print),
  ];
  const alphabet = [...'%@{}()[]<>,:=*+-x/"\\ \n\t0123456789abcdefkstuvf.$_', '->', 'tile<', '//'];

  /** Parses `text`; if it parses, printing is a fixed point from there on. */
  function parsesOrThrowsIRParseError(text: string): void {
    let m: Module;
    try {
      m = parse(text);
    } catch (e) {
      expect(e).toBeInstanceOf(IRParseError);
      const { line, column } = e as IRParseError;
      expect(line).toBeGreaterThanOrEqual(1);
      expect(column).toBeGreaterThanOrEqual(1);
      return;
    }
    const printed = print(m);
    expect(print(parse(printed))).toBe(printed);
  }

  it('on truncated text', () => {
    fc.assert(
      fc.property(fc.constantFrom(...corpus), fc.nat(), (text, n) => {
        parsesOrThrowsIRParseError(text.slice(0, n % (text.length + 1)));
      }),
      { numRuns: 500 },
    );
  });

  it('on text with random edits', () => {
    const edit = fc.record({ at: fc.nat(), kind: fc.constantFrom('insert', 'delete', 'replace'), text: fc.constantFrom(...alphabet) });
    fc.assert(
      fc.property(fc.constantFrom(...corpus), fc.array(edit, { minLength: 1, maxLength: 4 }), (text, edits) => {
        let mutated = text;
        for (const { at, kind, text: s } of edits) {
          const i = at % (mutated.length + 1);
          const rest = kind === 'insert' ? mutated.slice(i) : mutated.slice(i + 1);
          mutated = mutated.slice(0, i) + (kind === 'delete' ? '' : s) + rest;
        }
        parsesOrThrowsIRParseError(mutated);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('guards on wait and arrive', () => {
  const text = [
    'module @guarded ranks(2) {',
    '  tensor @A : f32[64, 32] sharded(0)',
    '  %c0 = chunk @A[0:32, 0:32] from 0 to 1 step 0 copy via auto',
    '  kernel @k grid(4) order(row-major) {',
    '    %pm = program_id 0',
    '    for %k = 0 to 32 step 8 {',
    '      wait %c0 when %pm in [0, 2), 16*%pm + %k in [-15, 32)',
    '      %a = load @A[16*%pm, %k] : tile<16x8xf32>',
    '      yield',
    '    }',
    '    arrive %c0 when %pm in [2, 4)',
    '  }',
    '}',
    '',
  ].join('\n');

  it('parses the conditions of a guard and prints them back unchanged', () => {
    const m = parse(text);
    const loop = m.kernel.body[1];
    if (loop?.op !== 'for') throw new Error('expected a loop');
    const wait = loop.body[0];
    if (wait?.op !== 'wait') throw new Error('expected a wait');
    expect(wait.guard?.map((g) => [g.expr.terms.map((t) => [t.value.name, t.coeff]), g.expr.constant, g.lo, g.hi])).toEqual([
      [[['pm', 1]], 0, 0, 2],
      [[['pm', 16], ['k', 1]], 0, -15, 32],
    ]);
    expect(print(m)).toBe(text);
  });

  it('a wait on a neighbouring rank (a cache line its copy shares with the chunk: passes\' cache-lines.ts) prints and parses back', () => {
    const neighbour = text.replace("    arrive %c0 when %pm in [2, 4)\n", "    wait %c0 on rank 0 when %pm in [3, 4)\n    arrive %c0 when %pm in [2, 4)\n");
    const m = parse(neighbour);
    const wait = m.kernel.body[2];
    if (wait?.op !== 'wait') throw new Error('expected a wait');
    expect(wait.rank).toBe(0);
    expect(print(m)).toBe(neighbour);
    expect(verify(parse(neighbour.replace('on rank 0', 'on rank 2'))).map((d) => d.message)).toEqual(['wait %c0 on rank 2: not a rank in [0, 2)']);
  });

  it('points at a malformed range', () => {
    expect(() => parse(text.replace('[0, 2)', '[0, 2]'))).toThrow(/7:33: expected '\)' to close a half-open range/);
  });
});

describe('rank_id', () => {
  it('prints and parses back, and its value indexes like a program id', () => {
    const text = [
      'module @per_rank ranks(2) {',
      '  tensor @X : f32[64, 8] replicated',
      '  kernel @k grid(1) order(row-major) {',
      '    %rank = rank_id',
      '    %x = load @X[32*%rank, 0] : tile<32x8xf32>',
      '    store %x, @X[32*%rank, 0]',
      '  }',
      '}',
      '',
    ].join('\n');
    const m = parse(text);
    expect(m.kernel.body[0]).toMatchObject({ op: 'rank_id', result: { name: 'rank', type: { kind: 'index' } } });
    expect(print(m)).toBe(text);
    expect(verify(m)).toEqual([]);
  });
});
