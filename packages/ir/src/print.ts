/**
 * The printer to the textual form (docs/ir.md): one op per line, two spaces of indent per nesting
 * level, every value printed as `%` + its name. `parse(print(m))` gives `m` back (ids and locs aside).
 */
import type {
  AffineExpr,
  AffineRange,
  Box,
  ChunkDecl,
  Distribution,
  ForOp,
  Kernel,
  Module,
  Op,
  TensorDecl,
  TileOrder,
  TileType,
  Value,
} from './types.js';

const INDENT = '  ';
const BARE_NAME = /^[A-Za-z0-9_]+$/;

export function print(m: Module): string {
  const lines = [`module ${symbol(m.name)} ranks(${m.ranks}) {`];
  for (const t of m.tensors) lines.push(INDENT + printTensor(t));
  for (const c of m.chunks) lines.push(INDENT + printChunk(c));
  printKernel(m.kernel, 1, lines);
  lines.push('}');
  return lines.join('\n') + '\n';
}

/** A name that is not a bare word is printed as a JSON string, so any name round-trips. */
function quoteName(name: string): string {
  return BARE_NAME.test(name) ? name : JSON.stringify(name);
}

function symbol(name: string): string {
  return '@' + quoteName(name);
}

function valueRef(v: Value): string {
  return '%' + quoteName(v.name);
}

/** `String(n)`, except that -0 prints as `-0` so that it survives the round trip. */
function printNumber(n: number): string {
  return Object.is(n, -0) ? '-0' : String(n);
}

export function printTileType(t: TileType): string {
  return `tile<${[...t.shape.map(String), t.dtype].join('x')}>`;
}

/** Terms first (`64*%pm - %k`), then a nonzero constant; a constant alone prints as itself. */
export function printAffine(e: AffineExpr): string {
  if (e.terms.length === 0) return String(e.constant);
  const parts = e.terms.map((t, i) => {
    const magnitude = Math.abs(t.coeff);
    const term = magnitude === 1 ? valueRef(t.value) : `${magnitude}*${valueRef(t.value)}`;
    if (i === 0) return t.coeff < 0 ? `-${term}` : term;
    return t.coeff < 0 ? `- ${term}` : `+ ${term}`;
  });
  if (e.constant !== 0) parts.push(e.constant < 0 ? `- ${-e.constant}` : `+ ${e.constant}`);
  return parts.join(' ');
}

function printDistribution(d: Distribution): string {
  switch (d.kind) {
    case 'replicated':
      return 'replicated';
    case 'sharded':
      return `sharded(${d.axis})`;
    case 'partial':
      return `partial(${d.reduce})`;
  }
}

function printTensor(t: TensorDecl): string {
  return `tensor ${symbol(t.name)} : ${t.dtype}[${t.shape.join(', ')}] ${printDistribution(t.distribution)}`;
}

function printRegion(b: Box): string {
  return b.lo.map((lo, i) => `${lo}:${b.hi[i]}`).join(', ');
}

function printChunk(c: ChunkDecl): string {
  return (
    `${valueRef(c.value)} = chunk ${symbol(c.tensor)}[${printRegion(c.region)}]` +
    ` from ${c.src} to ${c.dst} step ${c.step} ${c.kind} via ${c.backend}`
  );
}

/** Rank tables and segments: one rank per line, under the kernel header. */
function printOrder(o: TileOrder, depth = 0): string {
  const perRank = (items: readonly string[]) =>
    `[\n${items.map((item) => INDENT.repeat(depth + 2) + item).join(',\n')}\n${INDENT.repeat(depth + 1)}]`;
  switch (o.kind) {
    case 'row-major':
    case 'column-major':
      return o.kind;
    case 'grouped':
      return `grouped ${o.groupSize}`;
    case 'table':
      return `table ${printTable(o.tiles)}`;
    case 'rank-table':
      return `rank-table ${perRank(o.tables.map(printTable))}`;
    case 'segments':
      return `segments ${o.groupSize} ${perRank(o.ranks.map((boxes) => `[${boxes.map((b) => `[${printRegion(b)}]`).join(', ')}]`))}`;
  }
}

function printTable(tiles: readonly (readonly number[])[]): string {
  return `[${tiles.map((t) => `[${t.join(', ')}]`).join(', ')}]`;
}

function printKernel(k: Kernel, depth: number, lines: string[]): void {
  const header = `kernel ${symbol(k.name)} grid(${k.grid.join(', ')}) order(${printOrder(k.scheduler.order, depth)}) {`;
  lines.push(INDENT.repeat(depth) + header);
  printBlock(k.body, depth + 1, lines);
  lines.push(INDENT.repeat(depth) + '}');
}

/** One op as text (a `for` spans several lines), e.g. for a diagnostic. */
export function printOp(op: Op): string {
  const lines: string[] = [];
  printBlock([op], 0, lines);
  return lines.join('\n');
}

function printBlock(ops: readonly Op[], depth: number, lines: string[]): void {
  for (const op of ops) {
    if (op.op === 'for') {
      printFor(op, depth, lines);
    } else {
      lines.push(INDENT.repeat(depth) + printSimpleOp(op));
    }
  }
}

function printOffsets(tensor: string, offsets: readonly AffineExpr[]): string {
  return `${symbol(tensor)}[${offsets.map(printAffine).join(', ')}]`;
}

function refs(values: readonly Value[]): string {
  return values.map(valueRef).join(', ');
}

/** Every op but `for`, which owns a block. */
function printSimpleOp(op: Exclude<Op, ForOp>): string {
  switch (op.op) {
    case 'rank_id':
      return `${valueRef(op.result)} = rank_id`;
    case 'program_id':
      return `${valueRef(op.result)} = program_id ${op.axis}`;
    case 'constant':
      return `${valueRef(op.result)} = constant ${printNumber(op.value)} : ${printTileType(op.result.type)}`;
    case 'load':
      return `${valueRef(op.result)} = load ${printOffsets(op.tensor, op.offsets)} : ${printTileType(op.result.type)}`;
    case 'gather':
      return `${valueRef(op.result)} = gather ${symbol(op.tensor)}[${valueRef(op.index)}, ${printAffine(op.column)}] : ${printTileType(op.result.type)}`;
    case 'store':
      return `store ${valueRef(op.value)}, ${printOffsets(op.tensor, op.offsets)}`;
    case 'dot': {
      const operands = op.acc ? [op.a, op.b, op.acc] : [op.a, op.b];
      const transpose = op.transposeB ? ' transpose_b' : '';
      return `${valueRef(op.result)} = dot ${refs(operands)}${transpose} : ${printTileType(op.result.type)}`;
    }
    case 'map':
      return `${valueRef(op.result)} = map ${op.fn} ${refs(op.operands)} : ${printTileType(op.result.type)}`;
    case 'reduce':
      return `${valueRef(op.result)} = reduce ${op.fn} ${valueRef(op.value)} axis ${op.axis} : ${printTileType(op.result.type)}`;
    case 'cast':
      return `${valueRef(op.result)} = cast ${valueRef(op.value)} : ${printTileType(op.result.type)}`;
    case 'yield':
      return op.values.length === 0 ? 'yield' : `yield ${refs(op.values)}`;
    case 'wait':
      return `wait ${valueRef(op.chunk)}${op.rank === undefined ? '' : ` on rank ${op.rank}`}${printGuard(op.guard)}`;
    case 'arrive':
      return `arrive ${valueRef(op.chunk)}${printGuard(op.guard)}`;
  }
}

/** ` when %pm in [0, 2), %k in [32, 64)`, or nothing without a guard. */
function printGuard(guard: readonly AffineRange[] | undefined): string {
  if (!guard || guard.length === 0) return '';
  return ` when ${guard.map((g) => `${printAffine(g.expr)} in [${g.lo}, ${g.hi})`).join(', ')}`;
}

/** `%r = for %k = lo to hi step s iter(%x = %init) -> (tile<...>) {`; no carried values, no `iter`. */
function printFor(op: ForOp, depth: number, lines: string[]): void {
  let header = '';
  if (op.results.length > 0) header += `${refs(op.results)} = `;
  header += `for ${valueRef(op.inductionVar)} = ${printAffine(op.lower)} to ${printAffine(op.upper)} step ${op.step}`;
  if (op.iterArgs.length > 0) {
    const pairs = op.iterArgs.map((arg, i) => `${valueRef(arg)} = ${refs(op.inits.slice(i, i + 1))}`);
    const types = op.results.map((r) => printTileType(r.type));
    header += ` iter(${pairs.join(', ')}) -> (${types.join(', ')})`;
  }
  lines.push(INDENT.repeat(depth) + header + ' {');
  printBlock(op.body, depth + 1, lines);
  lines.push(INDENT.repeat(depth) + '}');
}
