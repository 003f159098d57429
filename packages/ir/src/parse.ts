/**
 * The parser of the textual form (docs/ir.md): a recursive-descent parser over the tokens of lexer.ts.
 * It builds the data and resolves every `%name` to the Value that defines it; the verifier checks
 * the rest (shapes, dtypes, scopes, tensor names). Malformed text throws `IRParseError` and nothing else.
 *
 * Value ids are handed out in order of definition, as the builder does: chunks in text order, then
 * kernel values in text order, except that a loop's results are defined after its body (induction
 * variable, carried values, body, results). So `parse(print(m))` gives a builder-made `m` its ids back.
 */
import { IRParseError } from './errors.js';
import { deepFreeze } from './freeze.js';
import { describeToken, tokenize, type Token } from './lexer.js';
import {
  BINARY_FNS,
  CHUNK_KINDS,
  COMM_BACKENDS,
  DTYPES,
  REDUCE_FNS,
  UNARY_FNS,
  type AffineExpr,
  type AffineRange,
  type AffineTerm,
  type Box,
  type ChunkDecl,
  type ChunkValue,
  type Distribution,
  type DType,
  type ForOp,
  type IndexType,
  type IndexValue,
  type Kernel,
  type MapFn,
  type Module,
  type Op,
  type SourceLoc,
  type TensorDecl,
  type TileOrder,
  type TileType,
  type TileValue,
  type Type,
  type Value,
} from './types.js';

export function parse(text: string): Module {
  return deepFreeze(new Parser(tokenize(text)).module());
}

const OP_NAME = 'an op name (rank_id, program_id, constant, load, gather, store, dot, map, reduce, cast, for, yield, wait, arrive)';
const VALUE_OPS = new Set(['rank_id', 'program_id', 'constant', 'load', 'gather', 'dot', 'map', 'reduce', 'cast']);
const EFFECT_OPS = new Set(['store', 'yield', 'wait', 'arrive']);
const MAP_FNS: readonly MapFn[] = [...UNARY_FNS, ...BINARY_FNS];
/** Deeper loop nests than this are surely not IR; the limit keeps the recursion off the stack's end. */
const MAX_LOOP_DEPTH = 500;
const INDEX: IndexType = { kind: 'index' };

const isTile = (v: Value): v is TileValue => v.type.kind === 'tile';
const isIndex = (v: Value): v is IndexValue => v.type.kind === 'index';
const isChunk = (v: Value): v is ChunkValue => v.type.kind === 'chunk';

class Parser {
  private pos = 0;
  private nextId = 0;
  private loopDepth = 0;
  /** Values that may be used: defined earlier in the text. */
  private readonly defined = new Map<string, Value>();
  /** Names already claimed, including loop results whose values come into being after the body. */
  private readonly taken = new Set<string>();

  constructor(private readonly tokens: readonly Token[]) {}

  // ---- token helpers ----

  private peek(offset = 0): Token {
    return this.tokens[Math.min(this.pos + offset, this.tokens.length - 1)]!;
  }

  private advance(): Token {
    const t = this.peek();
    if (t.kind !== 'eof') this.pos++;
    return t;
  }

  private fail(expected: string, at: Token = this.peek()): never {
    throw new IRParseError(at.line, at.column, expected, describeToken(at));
  }

  private isPunct(p: string, t: Token = this.peek()): boolean {
    return t.kind === 'punct' && t.text === p;
  }

  private isWord(w: string, t: Token = this.peek()): boolean {
    return t.kind === 'word' && t.text === w;
  }

  private eat(p: string): boolean {
    if (!this.isPunct(p)) return false;
    this.advance();
    return true;
  }

  private expectPunct(p: string, expected = `'${p}'`): Token {
    if (!this.isPunct(p)) this.fail(expected);
    return this.advance();
  }

  private expectWord(w: string, expected = `'${w}'`): Token {
    if (!this.isWord(w)) this.fail(expected);
    return this.advance();
  }

  private expectKind(kind: Token['kind'], expected: string): Token {
    if (this.peek().kind !== kind) this.fail(expected);
    return this.advance();
  }

  private oneOf<T extends string>(options: readonly T[], expected: string): T {
    const t = this.peek();
    const found = options.find((o) => this.isWord(o, t));
    if (found === undefined) this.fail(expected);
    this.advance();
    return found;
  }

  /** `open item (',' item)* close`, or `open close`. */
  private list<T>(open: string, close: string, item: () => T): T[] {
    this.expectPunct(open);
    const items: T[] = [];
    if (this.eat(close)) return items;
    do items.push(item());
    while (this.eat(','));
    this.expectPunct(close, `',' or '${close}'`);
    return items;
  }

  private symbolName(expected: string): string {
    return this.expectKind('symbol', expected).text;
  }

  // ---- numbers ----

  /** An optionally negative integer. */
  private integer(expected: string): number {
    const negative = this.eat('-');
    const t = this.peek();
    const n = t.kind === 'number' ? Number(t.text) : NaN;
    if (!Number.isInteger(n)) this.fail(expected);
    this.advance();
    return negative ? -n : n;
  }

  /** A constant's value: what `String(n)` prints, so also `-Infinity` and `NaN`, and `-0`. */
  private numberLiteral(): number {
    const negative = this.eat('-');
    const t = this.peek();
    let n: number;
    if (t.kind === 'number') n = Number(t.text);
    else if (this.isWord('Infinity')) n = Infinity;
    else if (this.isWord('NaN')) n = NaN;
    else this.fail('a number (such as 0, -1.5, 1e-7, Infinity or NaN)');
    this.advance();
    return negative ? -n : n;
  }

  // ---- values ----

  /** Claims a name for a value defined here, so that a second definition is an error. */
  private reserve(t: Token): void {
    if (this.taken.has(t.text)) this.fail('a value name not defined before', t);
    this.taken.add(t.text);
  }

  /** Brings a reserved name into being as a value with the next id. */
  private bind<T extends Type>(t: Token, type: T): Value<T> {
    const value: Value<T> = { id: this.nextId++, name: t.text, type };
    this.defined.set(t.text, value);
    return value;
  }

  private use<V extends Value>(isKind: (v: Value) => v is V, expected: string): V {
    const t = this.peek();
    if (t.kind !== 'value') this.fail(expected);
    const v = this.defined.get(t.text);
    if (v === undefined) this.fail('a defined value');
    if (!isKind(v)) this.fail(expected);
    this.advance();
    return v;
  }

  private tileUse(): TileValue {
    return this.use(isTile, 'a tile value (%name)');
  }

  private chunkUse(): ChunkValue {
    return this.use(isChunk, 'a chunk value (%name)');
  }

  private indexUse(): IndexValue {
    return this.use(isIndex, 'an index value (a program id or loop variable)');
  }

  /** `%a, %b, ... =`: is a definition next (rather than the operands of a `yield`)? */
  private atDefinition(): boolean {
    let i = 0;
    while (this.peek(i).kind === 'value') {
      if (this.isPunct('=', this.peek(i + 1))) return true;
      if (!this.isPunct(',', this.peek(i + 1))) return false;
      i += 2;
    }
    return false;
  }

  // ---- types ----

  private dtype(): DType {
    return this.oneOf(DTYPES, 'a dtype (f32 or f16)');
  }

  /** `tile<64x32xf32>`, `tile<f32>`: the lexer hands the part inside `<>` over as one word. */
  private tileType(): TileType {
    this.expectWord('tile', 'a tile type (tile<...>)');
    this.expectPunct('<', "'<' after 'tile'");
    const body = this.peek();
    if (body.kind !== 'word') this.fail('a tile shape and dtype (such as 64x32xf32)');
    const parts = body.text.split('x');
    const shape: number[] = [];
    let column = body.column;
    for (const [i, part] of parts.entries()) {
      const last = i === parts.length - 1;
      if (last && !(DTYPES as readonly string[]).includes(part)) this.failInWord(body, column, 'a dtype (f32 or f16)');
      if (!last && !/^\d+$/.test(part)) this.failInWord(body, column, 'a dimension (an integer)');
      if (!last) shape.push(Number(part));
      column += part.length + 1;
    }
    this.advance();
    this.expectPunct('>', "'>' to close the tile type");
    return { kind: 'tile', shape, dtype: parts[parts.length - 1] as DType };
  }

  /** An error at `column` inside a tile type's body `word`; found is the part of the word there. */
  private failInWord(word: Token, column: number, expected: string): never {
    const offset = column - word.column;
    // A trailing `x` leaves nothing to blame in the word: blame what follows it.
    if (offset >= word.text.length) this.fail(expected, this.peek(1));
    const part = word.text.slice(offset).split('x')[0] || 'x';
    throw new IRParseError(word.line, column, expected, `'${part}'`);
  }

  // ---- affine expressions ----

  /** `['-'] atom (('+' | '-') atom)*`; terms keep their textual order. */
  private affine(): AffineExpr {
    const terms: AffineTerm[] = [];
    let constant = 0;
    let sign = this.eat('-') ? -1 : 1;
    for (;;) {
      const t = this.peek();
      if (t.kind === 'value') {
        terms.push({ value: this.indexUse(), coeff: sign });
      } else if (t.kind === 'number') {
        const n = this.integer('an integer coefficient or constant');
        // `+ 0` turns a -0 from `- 0` into 0.
        if (this.eat('*')) terms.push({ value: this.indexUse(), coeff: sign * n + 0 });
        else constant += sign * n;
      } else {
        this.fail('an index expression (an integer or an index value)');
      }
      if (this.eat('+')) sign = 1;
      else if (this.eat('-')) sign = -1;
      else return { constant, terms };
    }
  }

  // ---- module level ----

  module(): Module {
    this.expectWord('module', "'module'");
    const name = this.symbolName('a module name (@name)');
    this.expectWord('ranks', "'ranks(' after the module name");
    this.expectPunct('(');
    const ranks = this.integer('the number of ranks (an integer)');
    this.expectPunct(')');
    this.expectPunct('{', "'{' to open the module");
    const tensors: TensorDecl[] = [];
    const chunks: ChunkDecl[] = [];
    while (!this.isWord('kernel')) {
      if (this.isWord('tensor')) tensors.push(this.tensor());
      else if (this.peek().kind === 'value') chunks.push(this.chunk());
      else this.fail("a declaration ('tensor @name', '%name = chunk' or 'kernel @name')");
    }
    const kernel = this.kernel();
    this.expectPunct('}', "'}' to close the module (a module has one kernel)");
    if (this.peek().kind !== 'eof') this.fail('end of input after the module');
    return { name, ranks, tensors, chunks, kernel };
  }

  private tensor(): TensorDecl {
    this.advance();
    const name = this.symbolName('a tensor name (@name)');
    this.expectPunct(':', "':' after the tensor name");
    const dtype = this.dtype();
    const shape = this.list('[', ']', () => this.integer('a dimension (an integer)'));
    return { name, shape, dtype, distribution: this.distribution() };
  }

  private distribution(): Distribution {
    const kind = this.oneOf(['replicated', 'sharded', 'partial'], 'a distribution (replicated, sharded(axis) or partial(sum))');
    if (kind === 'replicated') return { kind };
    this.expectPunct('(');
    let d: Distribution;
    if (kind === 'sharded') d = { kind, axis: this.integer('a tensor axis (an integer)') };
    else d = { kind, reduce: this.oneOf(['sum'], "a reduction ('sum')") };
    this.expectPunct(')');
    return d;
  }

  private chunk(): ChunkDecl {
    const nameToken = this.advance();
    this.reserve(nameToken);
    this.expectPunct('=', "'=' after a value name");
    this.expectWord('chunk', "'chunk' (only chunks are declared outside the kernel)");
    const tensor = this.symbolName('a tensor name (@name)');
    const region = this.region();
    this.expectWord('from', "'from' and a source rank");
    const src = this.integer('a source rank (an integer)');
    this.expectWord('to', "'to' and a destination rank");
    const dst = this.integer('a destination rank (an integer)');
    this.expectWord('step', "'step' and the chunk's step");
    const step = this.integer('a step (an integer)');
    const kind = this.oneOf(CHUNK_KINDS, 'a chunk kind (copy or reduce-add)');
    this.expectWord('via', "'via' and a backend");
    const backend = this.oneOf(COMM_BACKENDS, 'a backend (auto, gpu-signal or peer-copy)');
    return { value: this.bind(nameToken, { kind: 'chunk' }), tensor, region, src, dst, step, kind, backend };
  }

  /** `[lo:hi, ...]`, half-open per axis. */
  private region(): Box {
    const ranges = this.list('[', ']', () => {
      const lo = this.integer('a region bound (an integer)');
      this.expectPunct(':', "':' between a region's bounds");
      return [lo, this.integer('a region bound (an integer)')] as const;
    });
    return { lo: ranges.map((r) => r[0]), hi: ranges.map((r) => r[1]) };
  }

  private kernel(): Kernel {
    this.advance();
    const name = this.symbolName('a kernel name (@name)');
    this.expectWord('grid', "'grid(' after the kernel name");
    const grid = this.list('(', ')', () => this.integer('a grid size (an integer)'));
    this.expectWord('order', "'order(' after the grid");
    this.expectPunct('(');
    const order = this.order();
    this.expectPunct(')');
    this.expectPunct('{', "'{' to open the kernel body");
    return { name, grid, scheduler: { order }, body: this.block() };
  }

  private order(): TileOrder {
    const kind = this.oneOf(
      ['row-major', 'column-major', 'grouped', 'table', 'rank-table', 'segments'],
      'a tile order (row-major, column-major, grouped N, table [...], rank-table [...] or segments N [...])',
    );
    switch (kind) {
      case 'row-major':
      case 'column-major':
        return { kind };
      case 'grouped':
        return { kind, groupSize: this.integer('a group size (an integer)') };
      case 'table':
        return { kind, tiles: this.table() };
      case 'rank-table':
        return { kind, tables: this.list('[', ']', () => this.table()) };
      case 'segments': {
        const groupSize = this.integer('a group size (an integer)');
        // Per rank, `[[lo:hi, ...], ...]`: boxes of tiles, written as chunk regions are.
        return { kind, groupSize, ranks: this.list('[', ']', () => this.list('[', ']', () => this.region())) };
      }
    }
  }

  /** `[[0, 0], [1, 0], ...]`: tile coordinates, one tile per ticket. */
  private table(): number[][] {
    return this.list('[', ']', () => this.list('[', ']', () => this.integer('a tile coordinate (an integer)')));
  }

  // ---- ops ----

  /** Ops up to and including the closing `}`. */
  private block(): Op[] {
    const ops: Op[] = [];
    while (!this.eat('}')) ops.push(this.op());
    return ops;
  }

  private op(): Op {
    const first = this.peek();
    const loc: SourceLoc = { line: first.line, column: first.column };
    const results = first.kind === 'value' ? this.resultNames() : [];
    const name = this.peek();
    if (name.kind !== 'word') this.fail(results.length > 0 ? OP_NAME : "an op or '}'");
    if (name.text === 'for') return this.forOp(loc, results);
    if (EFFECT_OPS.has(name.text)) {
      if (results.length > 0) this.fail('an op that defines a value (rank_id, program_id, constant, load, gather, dot, map, reduce, cast, for)');
      return this.effectOp(loc);
    }
    if (!VALUE_OPS.has(name.text)) this.fail(OP_NAME);
    const [result, extra] = results;
    if (result === undefined) this.fail(`a result name before '${name.text}' ('%x = ${name.text} ...')`);
    if (extra !== undefined) this.fail("'for' (only a loop defines several values)");
    return this.valueOp(loc, result);
  }

  /** `%a, %b =`: reserves the names; the op binds them once their types are known. */
  private resultNames(): Token[] {
    const names: Token[] = [];
    do {
      const t = this.expectKind('value', 'a value name (%name)');
      this.reserve(t);
      names.push(t);
    } while (this.eat(','));
    this.expectPunct('=', "'=' after a value name");
    return names;
  }

  private resultType(): TileType {
    this.expectPunct(':', "':' and the result type");
    return this.tileType();
  }

  private valueOp(loc: SourceLoc, res: Token): Op {
    switch (this.advance().text) {
      case 'rank_id':
        return { op: 'rank_id', result: this.bind(res, INDEX), loc };
      case 'program_id': {
        const axis = this.integer('a grid axis (an integer)');
        return { op: 'program_id', result: this.bind(res, INDEX), axis, loc };
      }
      case 'constant': {
        const value = this.numberLiteral();
        return { op: 'constant', result: this.bind(res, this.resultType()), value, loc };
      }
      case 'load': {
        const tensor = this.symbolName('a tensor name (@name)');
        const offsets = this.list('[', ']', () => this.affine());
        return { op: 'load', result: this.bind(res, this.resultType()), tensor, offsets, loc };
      }
      case 'gather': {
        const tensor = this.symbolName('a tensor name (@name)');
        this.expectPunct('[', "'[' before the gather's index");
        const index = this.tileUse();
        this.expectPunct(',', "',' between the gather's index and its column offset");
        const column = this.affine();
        this.expectPunct(']', "']' after the gather's column offset");
        return { op: 'gather', result: this.bind(res, this.resultType()), tensor, index, column, loc };
      }
      case 'dot': {
        const a = this.tileUse();
        this.expectPunct(',', "',' between dot operands");
        const b = this.tileUse();
        const acc = this.eat(',') ? this.tileUse() : undefined;
        // `transpose_b`: b is [N,K] and the product a·bᵀ.
        const transposeB = this.isWord('transpose_b');
        if (transposeB) this.advance();
        const result = this.bind(res, this.resultType());
        return { op: 'dot', result, a, b, ...(acc ? { acc } : {}), ...(transposeB ? { transposeB } : {}), loc };
      }
      case 'map': {
        const fn = this.oneOf(MAP_FNS, 'a map function (neg, exp, log, sqrt, rsqrt, relu, silu, abs, add, sub, mul, div, max, min)');
        const operands = this.commaList(() => this.tileUse());
        return { op: 'map', result: this.bind(res, this.resultType()), fn, operands, loc };
      }
      case 'reduce': {
        const fn = this.oneOf(REDUCE_FNS, 'a reduction (sum, max or min)');
        const value = this.tileUse();
        this.expectWord('axis', "'axis' after the reduced value");
        const axis = this.integer('an axis (an integer)');
        return { op: 'reduce', result: this.bind(res, this.resultType()), fn, value, axis, loc };
      }
      default: {
        const value = this.tileUse();
        return { op: 'cast', result: this.bind(res, this.resultType()), value, loc };
      }
    }
  }

  private effectOp(loc: SourceLoc): Op {
    switch (this.advance().text) {
      case 'store': {
        const value = this.tileUse();
        this.expectPunct(',', "',' after the stored value");
        const tensor = this.symbolName('a tensor name (@name)');
        return { op: 'store', value, tensor, offsets: this.list('[', ']', () => this.affine()), loc };
      }
      case 'yield': {
        const hasValues = this.peek().kind === 'value' && !this.atDefinition();
        return { op: 'yield', values: hasValues ? this.commaList(() => this.tileUse()) : [], loc };
      }
      case 'wait': {
        const chunk = this.chunkUse();
        let rank: { rank?: number } = {};
        if (this.isWord('on')) {
          this.advance();
          this.expectWord('rank', "'rank' after 'on'");
          rank = { rank: this.integer('a rank (an integer)') };
        }
        return { op: 'wait', chunk, ...rank, ...this.guardClause(), loc };
      }
      default:
        return { op: 'arrive', chunk: this.chunkUse(), ...this.guardClause(), loc };
    }
  }

  /** `[when expr in [lo, hi), ...]` after a wait or arrive. */
  private guardClause(): { guard?: AffineRange[] } {
    if (!this.isWord('when')) return {};
    this.advance();
    const guard = this.commaList((): AffineRange => {
      const expr = this.affine();
      this.expectWord('in', "'in' after a guarded expression");
      this.expectPunct('[', "'[' to open a range [lo, hi)");
      const lo = this.integer('a range start (an integer)');
      this.expectPunct(',', "',' between a range's ends");
      const hi = this.integer('a range end (an integer)');
      this.expectPunct(')', "')' to close a half-open range [lo, hi)");
      return { expr, lo, hi };
    });
    return { guard };
  }

  private commaList<T>(item: () => T): T[] {
    const items = [item()];
    while (this.eat(',')) items.push(item());
    return items;
  }

  /** `for %k = lo to hi step s [iter(%x = %init, ...) -> (type, ...)] { body }`. */
  private forOp(loc: SourceLoc, resultNames: readonly Token[]): ForOp {
    this.advance();
    const ivName = this.expectKind('value', 'an induction variable (%name)');
    this.reserve(ivName);
    this.expectPunct('=', "'=' after the induction variable");
    const lower = this.affine();
    this.expectWord('to', "'to' after the lower bound");
    const upper = this.affine();
    this.expectWord('step', "'step' after the upper bound");
    const step = this.integer('a step (an integer)');
    const inductionVar = this.bind(ivName, INDEX);
    const { iterArgs, inits } = this.isWord('iter') ? this.iterClause(resultNames.length) : { iterArgs: [], inits: [] };
    if (iterArgs.length !== resultNames.length) this.fail(`'iter(...)' carrying the loop's results (${resultNames.length})`);
    this.expectPunct('{', "'{' to open the loop body");
    if (++this.loopDepth > MAX_LOOP_DEPTH) this.fail(`loops nested at most ${MAX_LOOP_DEPTH} deep`);
    const body = this.block();
    this.loopDepth--;
    const results = resultNames.map((t, i) => this.bind(t, iterArgs[i]!.type));
    return { op: 'for', results, inductionVar, lower, upper, step, iterArgs, inits, body, loc };
  }

  /** `iter(%x = %init, ...) -> (type, ...)`: the types are those of the carried values and results. */
  private iterClause(resultCount: number): { iterArgs: TileValue[]; inits: TileValue[] } {
    const iterToken = this.advance();
    const pairs = this.list('(', ')', () => {
      const name = this.expectKind('value', 'a carried value (%name)');
      this.reserve(name);
      this.expectPunct('=', "'=' after a carried value");
      return { name, init: this.tileUse() };
    });
    if (pairs.length !== resultCount) this.fail(`as many carried values as loop results (${resultCount})`, iterToken);
    const arrow = this.expectPunct('->', "'->' and the loop's result types");
    const types = this.list('(', ')', () => this.tileType());
    if (types.length !== pairs.length) this.fail(`as many result types as carried values (${pairs.length})`, arrow);
    return {
      iterArgs: pairs.map((p, i) => this.bind(p.name, types[i]!)),
      inits: pairs.map((p) => p.init),
    };
  }
}
