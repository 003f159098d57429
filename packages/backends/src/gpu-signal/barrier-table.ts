/**
 * Waits and arrives as data. A run of `wait` (or `arrive`) ops side by side in one block of the
 * kernel is one **barrier point**; the kernel's code for it is a loop over a row of a table, the
 * row of the tile that runs it (its local rank and its place in that rank's order), so the WGSL
 * does not grow with the chunks or the ranks: ag-gemm's R·(R−1) waits are one loop, whose row
 * holds the one or few chunks the tile reads.
 *
 * An entry of a wait point's row is a chunk and the run of its parts the tile reads: [chunk, first
 * part, end part); an arrive point's, a part whose counter the tile's stores count on and how many
 * requirements they meet: [lead, n] (a merged reduce-add's destination counts once for the group,
 * as many requirements as members; see chunk-table.ts). Everything the old per-chunk code tested
 * that the tile fixes (the rank, program ids, the rows a tile reads or stores) is settled here on
 * the host with the same arithmetic; what depends on a loop variable (ring attention's waits, by KV
 * block) stays a condition, checked in the kernel: a guard's expression splits into its part in
 * program ids and the rank (folded into the bounds, per tile) and its part in loop variables, a
 * **slot** the kernel computes once per point. Each entry carries `conditions` triples [slot, lo,
 * hi] (i32 bits; unused ones always hold).
 *
 * Layout from a point's base: per local rank and position in its order, a pair [first word,
 * entries] (rows with the same entries share them), then the entries. For a point indexed by a
 * loop's iterations, a pair per tile and iteration, then per tile a bit per iteration that has
 * entries other than the iteration before's (`maskWords(point)` words); where the loop has at most
 * 64 iterations the kernel reads those words once, before the loop, so an iteration with nothing new
 * to wait for tests a bit of a register and reads no memory.
 */
import { dtypeBytes, type AffineExpr, type ArriveOp, type ForOp, type Module, type Op, type WaitOp } from '@syncopate/ir';
import { CACHE_LINE_BYTES } from '@syncopate/passes';
import { alignedModule } from './alignment.js';
import { partsStoredBy, siteRows, type ChunkTable, type StoreRows } from './chunk-table.js';

export interface BarrierPoint {
  readonly index: number;
  readonly kind: 'wait' | 'arrive';
  readonly ops: readonly (WaitOp | ArriveOp)[];
  /** Inside a loop (its waits remember the parts they saw published: emit-signal.ts). */
  readonly inLoop: boolean;
  /** Guards' parts in loop variables (or anything else the host cannot fix per tile), one slot each. */
  readonly slots: readonly AffineExpr[];
  /** Conditions each entry carries: the most any op's guard has on slots. */
  readonly conditions: number;
  /** Words of an entry: the payload (3 for a wait, 2 for an arrive), then 3 per condition. */
  readonly entryWords: number;
  /**
   * Set where the guards depend on one loop's variable only, and that loop's bounds are constants:
   * the entries are per tile and iteration of that loop, those whose guards hold there (no condition
   * left to check in the kernel). On an H200 ring attention's fused kernel at 4 ranks (S 4096: a chunk
   * is waited for in 16 iterations running) took 1.346 ms with a guarded block per chunk, 1.461 with
   * each entry's condition checked per iteration, 1.401 with a row per iteration read each time and
   * 1.410 with a bit per iteration with entries: what cost was reading the entries again in each of
   * the 16 iterations after the parts were seen, which a bit only where the entries change skips.
   */
  readonly loop?: BarrierLoop;
}

/** The loop a point's rows are indexed by: iteration i has the variable at lower + i·step. */
export interface BarrierLoop {
  readonly iv: number;
  readonly lower: number;
  readonly step: number;
  readonly iterations: number;
  /** The point is in the loop's own body (not a loop inside it): it runs once an iteration. */
  readonly direct: boolean;
}

/** The most (tile, iteration) pairs a point indexed by iteration may have; past it, entries keep conditions. */
const MAX_ITERATION_ROWS = 1 << 20;

export const WAIT_PAYLOAD = 3;
export const ARRIVE_PAYLOAD = 2;
/** An unused condition: slot 0 in [i32 min, i32 max). */
const ALWAYS = [0, 0x80000000, 0x7fffffff];

/** Values the host knows per tile: program ids (id → grid axis) and the rank. */
interface TileValues {
  readonly pidAxis: ReadonlyMap<number, number>;
  readonly rankIds: ReadonlySet<number>;
}

function tileValues(module: Module): TileValues {
  const pidAxis = new Map<number, number>();
  const rankIds = new Set<number>();
  const walk = (ops: readonly Op[]) =>
    ops.forEach((op) => {
      if (op.op === 'program_id') pidAxis.set(op.result.id, op.axis);
      if (op.op === 'rank_id') rankIds.add(op.result.id);
      if (op.op === 'for') walk(op.body);
    });
  walk(module.kernel.body);
  return { pidAxis, rankIds };
}

const isStatic = (v: TileValues, id: number) => v.pidAxis.has(id) || v.rankIds.has(id);

/** `e`'s terms the host does not know per tile, as a key (sorted, so equal parts share a slot). */
function dynamicPart(v: TileValues, e: AffineExpr): AffineExpr | undefined {
  const terms = e.terms.filter((t) => !isStatic(v, t.value.id));
  return terms.length === 0 ? undefined : { constant: 0, terms: [...terms].sort((a, b) => a.value.id - b.value.id) };
}

const slotKey = (e: AffineExpr) => e.terms.map((t) => `${t.coeff}*${t.value.id}`).join('+');

/**
 * The kernel's barrier points in program order (the order the emitter meets them). `rows` (local
 * ranks × tiles per rank) bounds the tables of points indexed by iteration (Infinity: none is).
 */
export function barrierPoints(module: Module, rows = 0): BarrierPoint[] {
  const values = tileValues(module);
  const points: BarrierPoint[] = [];
  const walk = (ops: readonly Op[], loops: readonly ForOp[]) => {
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!;
      if (op.op === 'for') walk(op.body, [...loops, op]);
      if (op.op !== 'wait' && op.op !== 'arrive') continue;
      const run: (WaitOp | ArriveOp)[] = [];
      for (; ops[i]?.op === op.op; i++) run.push(ops[i] as WaitOp | ArriveOp);
      i--;
      const slots = new Map<string, AffineExpr>();
      let conditions = 0;
      for (const x of run) {
        const dynamic = (x.guard ?? []).flatMap((g) => dynamicPart(values, g.expr) ?? []);
        dynamic.forEach((d) => slots.has(slotKey(d)) || slots.set(slotKey(d), d));
        conditions = Math.max(conditions, dynamic.length);
      }
      const payload = op.op === 'wait' ? WAIT_PAYLOAD : ARRIVE_PAYLOAD;
      const loop = conditions > 0 ? iterationLoop([...slots.values()], loops, rows) : undefined;
      points.push({
        index: points.length,
        kind: op.op,
        ops: run,
        inLoop: loops.length > 0,
        ...(loop ? { slots: [], conditions: 0, entryWords: payload, loop } : { slots: [...slots.values()], conditions, entryWords: payload + 3 * conditions }),
      });
    }
  };
  walk(module.kernel.body, []);
  return points;
}

/** The loop whose iterations can index the rows, if the slots name only its variable and its bounds are constants. */
function iterationLoop(slots: readonly AffineExpr[], loops: readonly ForOp[], rows: number): BarrierLoop | undefined {
  const ivs = new Set(slots.flatMap((s) => s.terms.map((t) => t.value.id)));
  if (ivs.size !== 1) return undefined;
  const loop = loops.find((l) => ivs.has(l.inductionVar.id));
  if (!loop || loop.lower.terms.length > 0 || loop.upper.terms.length > 0 || loop.step <= 0) return undefined;
  const iterations = Math.max(0, Math.ceil((loop.upper.constant - loop.lower.constant) / loop.step));
  if (iterations === 0 || rows * iterations > MAX_ITERATION_ROWS) return undefined;
  return { iv: loop.inductionVar.id, lower: loop.lower.constant, step: loop.step, iterations, direct: loop === loops[loops.length - 1] };
}

/** What `barrierWords` needs of the kernel's placement: the local ranks and each rank's tile order. */
export interface BarrierLayout {
  readonly ranks: readonly number[];
  /** Per rank (global index): its tiles in the order its tickets run them. */
  readonly orders: readonly (readonly (readonly number[])[])[];
}

/**
 * The rows of every point, appended to `words`, whose word i lies at `offset` + i of the tables
 * buffer (the words before it are written apart: the chunk descriptors, straight into a typed
 * array); returns each point's base and where its iteration bits start (indices into the tables
 * buffer).
 */
export function appendBarrierRows(words: number[], module: Module, table: ChunkTable, points: readonly BarrierPoint[], layout: BarrierLayout, offset = 0): { bases: number[]; bits: number[] } {
  if (points.length === 0) return { bases: [], bits: [] };
  const values = tileValues(module);
  const grid = module.kernel.grid;
  const tiles = grid.reduce((a, b) => a * b, 1);
  const chunkIndex = new Map(module.chunks.map((c, i) => [c.value.id, i]));
  const readRows = waitRows(module);
  const localIndex = new Map(layout.ranks.map((r, i) => [r, i]));
  const bases: number[] = [];
  const bits: number[] = [];
  for (const point of points) {
    const slots = new Map(point.slots.map((s, i) => [slotKey(s), i]));
    const iterations = point.loop?.iterations ?? 1;
    const base = offset + words.length;
    bases.push(base);
    const masks = base + 2 * layout.ranks.length * tiles * iterations;
    bits.push(masks);
    for (let i = 0; i < layout.ranks.length * tiles * (2 * iterations + maskWords(point)); i++) words.push(0);
    const place = placer(words, offset);
    // Entries per local rank and tile (row-major index) and iteration, in the order of the point's ops.
    const rows: number[][][] = layout.ranks.map(() => Array.from({ length: tiles * iterations }, () => []));
    for (const op of point.ops) {
      const c = chunkIndex.get(op.chunk.id)!;
      const { chunk } = table.entries[c]!;
      const neighbour = op.op === 'wait' ? op.rank : undefined;
      // A neighbour's wait (a line its copy shares with the chunk's bytes) only where both copies are in this device's buffer.
      if (neighbour !== undefined && !localIndex.has(chunk.dst)) continue;
      for (const rank of neighbour !== undefined ? [neighbour] : op.op === 'wait' || chunk.src === chunk.dst ? [chunk.dst] : [chunk.src, chunk.dst]) {
        const local = localIndex.get(rank);
        const read = neighbour !== undefined ? sharedRows(module, chunk.tensor, chunk.dst, neighbour) : readRows.get(op.chunk.id);
        const payloads = local === undefined ? undefined : op.op === 'wait' ? waitPayload(table, c, read, values.pidAxis) : arrivePayload(table, c, rank, values.pidAxis);
        if (!payloads) continue;
        const row = rows[local!]!;
        forEachGuardedTile(values, grid, op.guard ?? [], rank, (tile, linear, conditions) => {
          const entries = payloads(tile);
          if (entries.length === 0) return;
          const push = (list: number[], conds: readonly number[]) => pushEntries(list, entries, conds);
          const { loop } = point;
          if (loop) {
            // The conditions name only the loop's variable: keep the entries in the iterations where they hold.
            for (let i = 0; i < loop.iterations; i++) {
              const v = loop.lower + i * loop.step;
              const holds = conditions.every(({ expr, lo, hi }) => {
                const x = expr.terms.reduce((n, t) => n + t.coeff * v, 0);
                return x >= lo && x < hi;
              });
              if (holds) push(row[linear * iterations + i]!, []);
            }
            return;
          }
          const conds: number[] = [];
          for (const { expr, lo, hi } of conditions) conds.push(slots.get(slotKey(expr))!, lo >>> 0, hi >>> 0);
          for (let k = conditions.length; k < point.conditions; k++) conds.push(...ALWAYS);
          push(row[linear]!, conds);
        });
      }
    }
    layout.ranks.forEach((rank, local) => {
      layout.orders[rank]!.forEach((tile, position) => {
        const at = base + 2 * (local * tiles + position);
        const linear = linearIndex(grid, tile);
        if (!point.loop) {
          const entries = rows[local]![linear]!;
          words[at - offset] = place(entries);
          words[at - offset + 1] = entries.length / point.entryWords;
          return;
        }
        // A pair per iteration, then (after every tile's pairs) a bit per iteration that has entries.
        let mask = 0;
        let previous = -1;
        for (let i = 0; i < iterations; i++) {
          const entries = rows[local]![linear * iterations + i]!;
          const pair = base + 2 * ((local * tiles + position) * iterations + i);
          const first = place(entries);
          words[pair - offset] = first;
          words[pair - offset + 1] = entries.length / point.entryWords;
          // An iteration whose entries are the ones the iteration before waited for has nothing left
          // to wait for (parts stay published), where the point runs once an iteration.
          const repeated = point.loop!.direct && first === previous;
          if (entries.length > 0 && !repeated) mask |= 1 << (i % 32);
          previous = entries.length > 0 ? first : -1;
          if (i % 32 === 31 || i === iterations - 1) {
            words[masks - offset + (local * tiles + position) * maskWords(point) + Math.floor(i / 32)] = mask >>> 0;
            mask = 0;
          }
        }
      });
    });
  }
  return { bases, bits };
}

/** Each entry, then `conds`, onto `list`. */
function pushEntries(list: number[], entries: readonly (readonly number[])[], conds: readonly number[]): void {
  for (const entry of entries) {
    for (const x of entry) list.push(x);
    for (const x of conds) list.push(x);
  }
}

/**
 * `place(list)`: the first word of `list` in the tables, written once per distinct list. Lists are
 * found by a hash of their words and compared word by word: a key joined from the words cost a
 * string per row (a thousand rows of dozens of words at 64 ranks).
 */
function placer(words: number[], offset: number): (list: readonly number[]) => number {
  const placed = new Map<number, { first: number; length: number }[]>();
  return (list) => {
    let hash = list.length;
    for (const x of list) hash = (Math.imul(hash, 31) + x) | 0;
    const same = placed.get(hash);
    for (const known of same ?? []) {
      if (known.length === list.length && list.every((x, i) => words[known.first - offset + i] === x)) return known.first;
    }
    const first = offset + words.length;
    for (const x of list) words.push(x);
    if (same) same.push({ first, length: list.length });
    else placed.set(hash, [{ first, length: list.length }]);
    return first;
  };
}

/** Words of a tile's iteration bits, for a point indexed by its loop's iterations. */
export const maskWords = (point: BarrierPoint): number => (point.loop ? Math.ceil(point.loop.iterations / 32) : 0);

const linearIndex = (grid: readonly number[], tile: readonly number[]) => tile.reduce((n, x, i) => n * grid[i]! + x, 0);

/**
 * Calls `visit` for each tile (one array, changed after each call) where the guard's conditions the
 * host knows (program ids and `rank`) hold, with the rest as conditions on slots, their bounds moved by the known part. Conditions on
 * one program id narrow the tiles visited (the guards barrier insertion writes are all of that form).
 */
function forEachGuardedTile(
  values: TileValues,
  grid: readonly number[],
  guard: readonly { expr: AffineExpr; lo: number; hi: number }[],
  rank: number,
  visit: (tile: number[], linear: number, conditions: { expr: AffineExpr; lo: number; hi: number }[]) => void,
): void {
  const lo = grid.map(() => 0);
  const hi = [...grid];
  const checks: typeof guard[number][] = [];
  for (const g of guard) {
    const [t] = g.expr.terms;
    const axis = g.expr.terms.length === 1 && t!.coeff === 1 ? values.pidAxis.get(t!.value.id) : undefined;
    if (axis === undefined) {
      checks.push(g);
      continue;
    }
    lo[axis] = Math.max(lo[axis]!, g.lo - g.expr.constant);
    hi[axis] = Math.min(hi[axis]!, g.hi - g.expr.constant);
  }
  if (lo.some((l, i) => l >= hi[i]!)) return;
  const known = (id: number) => (values.rankIds.has(id) ? rank : undefined);
  const tile = [...lo];
  const none: { expr: AffineExpr; lo: number; hi: number }[] = [];
  for (;;) {
    const conditions = checks.length === 0 ? none : [];
    let holds = true;
    for (const g of checks) {
      let fixed = g.expr.constant;
      const rest: AffineExpr['terms'][number][] = [];
      for (const t of g.expr.terms) {
        const axis = values.pidAxis.get(t.value.id);
        const x = axis === undefined ? known(t.value.id) : tile[axis];
        if (x === undefined) rest.push(t);
        else fixed += t.coeff * x;
      }
      if (rest.length === 0) holds &&= fixed >= g.lo && fixed < g.hi;
      else conditions.push({ expr: { constant: 0, terms: [...rest].sort((a, b) => a.value.id - b.value.id) }, lo: g.lo - fixed, hi: g.hi - fixed });
    }
    if (holds) visit(tile, linearIndex(grid, tile), conditions);
    let axis = grid.length - 1;
    for (; axis >= 0; axis--) {
      if (++tile[axis]! < hi[axis]!) break;
      tile[axis] = lo[axis]!;
    }
    if (axis < 0) return;
  }
}

/** A tile's entries' payloads, from its coordinates. */
type Payloads = (tile: readonly number[]) => number[][];

/** The rows a tile reads of each waited chunk's tensor, from the loads that wait for it, as the destination runs them (`siteRows`). */
function waitRows(module: Module): Map<number, StoreRows | undefined> {
  const uses = new Map<number, { dst: number; sites: Parameters<typeof siteRows>[1][number][]; spill: number }>();
  for (const u of alignedModule(module).alignment.waits) {
    if (u.rank !== undefined) continue; // a neighbour's wait: `sharedRows`
    // A load that waits by cache line (passes' cache-lines.ts) reads rows up to `spill` past the chunk's.
    const spill = u.reach ? Math.max(u.chunk.region.lo[0]! - u.reach.lo[0]!, u.reach.hi[0]! - u.chunk.region.hi[0]!) : 0;
    const known = uses.get(u.chunk.value.id);
    if (known) {
      known.sites.push(u.site);
      known.spill = Math.max(known.spill, spill);
    } else uses.set(u.chunk.value.id, { dst: u.chunk.dst, sites: [u.site], spill });
  }
  // Thousands of chunks, read through a site or two: each (sites, rank) worked out once.
  const bySites = new Map<string | number, StoreRows | undefined>();
  const rows = new Map<number, StoreRows | undefined>();
  for (const [id, { dst, sites, spill }] of uses) {
    const key = sites.length === 1 ? sites[0]!.index * module.ranks + dst : `${sites.map((x) => x.index).join()}/${dst}`;
    if (!bySites.has(key)) bySites.set(key, siteRows(module, sites, 0, dst));
    const read = bySites.get(key);
    // The rows whose cache lines the tile reads: `spill` either side of the rows it reads.
    rows.set(id, read && spill > 0 ? { offset: { ...read.offset, constant: read.offset.constant - spill }, extent: read.extent + 2 * spill } : read);
  }
  return rows;
}

/**
 * The rows of `dst`'s copy of `tensor` that share a cache line with `rank`'s copy (rank r's copy at
 * element r·rows·cols of the buffer): what a neighbour's wait (passes' cache-lines.ts) waits for, in
 * whichever tile reads those lines.
 */
function sharedRows(module: Module, tensor: string, dst: number, rank: number): StoreRows {
  const t = module.tensors.find((x) => x.name === tensor)!;
  const [R, C] = [t.shape[0]!, t.shape.slice(1).reduce((a, b) => a * b, 1)];
  const size = dtypeBytes(t.dtype);
  const copy = R * C * size;
  // The bytes of dst's copy in lines that hold bytes of rank's: its first lines, or its last.
  const [from, to] =
    rank < dst
      ? [dst * copy, Math.min((dst + 1) * copy, (Math.floor(((rank + 1) * copy - 1) / CACHE_LINE_BYTES) + 1) * CACHE_LINE_BYTES)]
      : [Math.max(dst * copy, Math.floor(rank * copy / CACHE_LINE_BYTES) * CACHE_LINE_BYTES), (dst + 1) * copy];
  const a = Math.floor((from - dst * copy) / size / C);
  const b = Math.ceil((to - dst * copy) / size / C);
  return { offset: { constant: a, terms: [] }, extent: Math.max(0, b - a) };
}

/**
 * On the chunk's destination: the run of parts the tile's read rows meet, every column part of each
 * row part (a superset of the columns read); all of them without a single read site.
 */
function waitPayload(table: ChunkTable, c: number, rows: StoreRows | undefined, pidAxis: ReadonlyMap<number, number>): Payloads {
  const e = table.entries[c]!;
  const [lo, hi] = [e.chunk.region.lo[0]!, e.chunk.region.hi[0]!];
  // The offset's terms as (grid axis, coefficient): evaluated per tile without a map of values.
  const terms = rows?.offset.terms.map((t) => [pidAxis.get(t.value.id)!, t.coeff] as const) ?? [];
  return (tile) => {
    const start = rows ? terms.reduce((n, [axis, coeff]) => n + coeff * tile[axis]!, rows.offset.constant) : lo;
    const [r0, r1] = [Math.max(start, lo), rows ? Math.min(start + rows.extent, hi) : hi];
    if (r0 >= r1) return [];
    const part = (row: number) => e.firstPart + Math.trunc((row - e.rowOrigin) / e.partRows) * e.colParts;
    return [[c, part(r0), part(r1 - 1) + e.colParts]];
  };
}

/**
 * On the chunk's source (and a reduce-add's destination, unless it is a merged member, whose
 * destination counts at the lead's arrive): each part the tile's stores meet, counted on its lead.
 */
function arrivePayload(table: ChunkTable, c: number, rank: number, pidAxis: ReadonlyMap<number, number>): Payloads | undefined {
  const e = table.entries[c]!;
  const { chunk } = e;
  const first = table.parts[e.firstPart]!;
  const mergedMember = first.lead !== e.firstPart;
  const counts = rank === chunk.src || (chunk.kind === 'reduce-add' && !mergedMember && rank === chunk.dst);
  if (!counts) return undefined;
  const n = first.members.length > 1 && rank === chunk.dst ? first.members.length : 1;
  // Part p of a merged member counts on part p of the lead's chunk.
  return (tile) => partsStoredBy(e, tile, pidAxis).map((p) => [first.lead + p, n]);
}
