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
 * entries] (rows with the same entries share them), then the entries.
 */
import { type AffineExpr, type ArriveOp, type Module, type Op, type WaitOp } from '@syncopate/ir';
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
}

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

/** The kernel's barrier points in program order (the order the emitter meets them). */
export function barrierPoints(module: Module): BarrierPoint[] {
  const values = tileValues(module);
  const points: BarrierPoint[] = [];
  const walk = (ops: readonly Op[], inLoop: boolean) => {
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!;
      if (op.op === 'for') walk(op.body, true);
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
      points.push({ index: points.length, kind: op.op, ops: run, inLoop, slots: [...slots.values()], conditions, entryWords: payload + 3 * conditions });
    }
  };
  walk(module.kernel.body, false);
  return points;
}

/** What `barrierWords` needs of the kernel's placement: the local ranks and each rank's tile order. */
export interface BarrierLayout {
  readonly ranks: readonly number[];
  /** Per rank (global index): its tiles in the order its tickets run them. */
  readonly orders: readonly (readonly (readonly number[])[])[];
}

/**
 * The rows of every point, appended to `words` (the tables buffer so far); returns each point's
 * base (an index into the tables buffer).
 */
export function appendBarrierRows(words: number[], module: Module, table: ChunkTable, points: readonly BarrierPoint[], layout: BarrierLayout): number[] {
  if (points.length === 0) return [];
  const values = tileValues(module);
  const grid = module.kernel.grid;
  const tiles = grid.reduce((a, b) => a * b, 1);
  const chunkIndex = new Map(module.chunks.map((c, i) => [c.value.id, i]));
  const readRows = waitRows(module);
  const localIndex = new Map(layout.ranks.map((r, i) => [r, i]));
  const bases: number[] = [];
  for (const point of points) {
    const slots = new Map(point.slots.map((s, i) => [slotKey(s), i]));
    const base = words.length;
    bases.push(base);
    const rowsAt = base;
    for (let i = 0; i < 2 * layout.ranks.length * tiles; i++) words.push(0);
    const shared = new Map<string, number>();
    // Entries per local rank and tile (row-major index), in the order of the point's ops.
    const rows: number[][][] = layout.ranks.map(() => Array.from({ length: tiles }, () => []));
    for (const op of point.ops) {
      const c = chunkIndex.get(op.chunk.id)!;
      const { chunk } = table.entries[c]!;
      for (const rank of op.op === 'wait' || chunk.src === chunk.dst ? [chunk.dst] : [chunk.src, chunk.dst]) {
        const local = localIndex.get(rank);
        const payloads = local === undefined ? undefined : op.op === 'wait' ? waitPayload(table, c, readRows.get(op.chunk.id), values.pidAxis) : arrivePayload(table, c, rank, values.pidAxis);
        if (!payloads) continue;
        const row = rows[local!]!;
        forEachGuardedTile(values, grid, op.guard ?? [], rank, (tile, linear, conditions) => {
          const entries = payloads(tile);
          if (entries.length === 0) return;
          const conds: number[] = [];
          for (const { expr, lo, hi } of conditions) conds.push(slots.get(slotKey(expr))!, lo >>> 0, hi >>> 0);
          for (let k = conditions.length; k < point.conditions; k++) conds.push(...ALWAYS);
          const list = row[linear]!;
          for (const entry of entries) {
            for (const x of entry) list.push(x);
            for (const x of conds) list.push(x);
          }
        });
      }
    }
    layout.ranks.forEach((rank, local) => {
      layout.orders[rank]!.forEach((tile, position) => {
        const entries = rows[local]![linearIndex(grid, tile)]!;
        const key = entries.join();
        let first = shared.get(key);
        if (first === undefined) {
          first = words.length;
          shared.set(key, first);
          for (const x of entries) words.push(x);
        }
        const at = rowsAt + 2 * (local * tiles + position);
        words[at] = first;
        words[at + 1] = entries.length / point.entryWords;
      });
    });
  }
  return bases;
}

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
  const uses = new Map<number, { dst: number; sites: Parameters<typeof siteRows>[1][number][] }>();
  for (const u of alignedModule(module).alignment.waits) {
    const known = uses.get(u.chunk.value.id);
    if (known) known.sites.push(u.site);
    else uses.set(u.chunk.value.id, { dst: u.chunk.dst, sites: [u.site] });
  }
  return new Map([...uses].map(([id, { dst, sites }]) => [id, siteRows(module, sites, 0, dst)]));
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
