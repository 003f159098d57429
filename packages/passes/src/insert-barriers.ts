/**
 * `insert-barriers`: puts a `wait` before the first access to a chunk's data and an `arrive` after
 * the last store into it, from the chunk alignment. A wait sits in the innermost loop whose variable
 * its guard needs, so a loop-invariant wait is hoisted out of the reduction loop; a wait dominated by
 * an earlier one for the same chunk (same or enclosing block, weaker guard) is dropped.
 */
import * as E from 'fp-ts/lib/Either.js';
import { castDraft } from 'immer';
import { affineEquals, deepFreeze, type AffineRange, type ArriveOp, type Box, type ChunkDecl, type Module, type Op, type WaitOp } from '@syncopate/ir';
import { alignChunks, arrivalTiles, type ChunkUse } from './analysis/align.js';
import { variableExpr } from './analysis/touch.js';
import { definePass, editModule, type Pass } from './pass.js';

/** An op to insert into the block at `block` (a path of op indices), before op `before` of it. */
interface Insertion {
  readonly block: readonly number[];
  readonly before: number;
  readonly op: WaitOp | ArriveOp;
}

function placeWait(use: ChunkUse): Insertion {
  const { path, loops } = use.site;
  const uses = (id: number) => use.guard.some((g) => g.expr.terms.some((t) => t.value.id === id));
  let depth = -1;
  loops.forEach((loop, i) => {
    if (uses(loop.iv.id)) depth = i;
  });
  const guard = use.guard.length > 0 ? { guard: use.guard } : {};
  const rank = use.rank === undefined ? {} : { rank: use.rank };
  return { block: path.slice(0, depth + 1), before: path[depth + 1]!, op: { op: 'wait', chunk: use.chunk.value, ...rank, ...guard } };
}

/** `b`'s conditions imply `a`'s: every condition of `a` is met by a narrower one of `b` on the same expression. */
function implies(b: readonly AffineRange[], a: readonly AffineRange[]): boolean {
  return a.every((x) => b.some((y) => affineEquals(x.expr, y.expr) && y.lo >= x.lo && y.hi <= x.hi));
}

/** `w1` runs before `w2` whenever `w2` runs (on the same rank): its block encloses `w2`'s and it comes first there. */
function dominates(w1: Insertion, w2: Insertion): boolean {
  if ((w1.op as WaitOp).rank !== (w2.op as WaitOp).rank) return false;
  const depth = w1.block.length;
  if (w2.block.length < depth || w1.block.some((x, i) => w2.block[i] !== x)) return false;
  const w2Position = depth === w2.block.length ? w2.before : w2.block[depth]!;
  return w1.before <= w2Position;
}

/** Ranks a neighbour's wait key tells apart (past it two ranks' waits share a group; `dominates` still tells them apart). */
const MAX_KEY_RANKS = 1 << 20;

function withoutDominated(waits: Insertion[]): Insertion[] {
  // Only waits for the same chunk on the same rank can dominate each other: compare within those, not all pairs.
  // (A number key: tens of thousands of waits at 256 ranks; a neighbour's wait, rare, keyed below zero.)
  const key = (w: Insertion) => {
    const rank = (w.op as WaitOp).rank;
    return rank === undefined ? w.op.chunk.id : -1 - (w.op.chunk.id * MAX_KEY_RANKS + rank);
  };
  const sameChunk = new Map<number, { wait: Insertion; index: number }[]>();
  waits.forEach((wait, index) => {
    const group = sameChunk.get(key(wait));
    if (group) group.push({ wait, index });
    else sameChunk.set(key(wait), [{ wait, index }]);
  });
  return waits.filter(
    (w2, j) =>
      !sameChunk.get(key(w2))!.some(
        ({ wait: w1, index: i }) => i !== j && dominates(w1, w2) && implies(w2.op.guard ?? [], w1.op.guard ?? []) &&
          // of two identical waits keep the first
          (i < j || !(dominates(w2, w1) && implies(w1.op.guard ?? [], w2.op.guard ?? []))),
      ),
  );
}

/** Conditions on program ids that hold exactly inside `tiles`. */
function tileGuard(module: Module, tiles: Box): AffineRange[] {
  const guard: AffineRange[] = [];
  for (const op of module.kernel.body) {
    if (op.op !== 'program_id') continue;
    const lo = tiles.lo[op.axis]!;
    const hi = tiles.hi[op.axis]!;
    if (lo > 0 || hi < module.kernel.grid[op.axis]!) guard.push({ expr: variableExpr(op.result), lo, hi });
  }
  return guard;
}

function placeArrive(module: Module, chunk: ChunkDecl, uses: readonly ChunkUse[], tiles: Box): Insertion {
  const last = Math.max(...uses.map((u) => u.site.topLevel));
  const guard = tileGuard(module, tiles);
  return { block: [], before: last + 1, op: { op: 'arrive', chunk: chunk.value, ...(guard.length > 0 ? { guard } : {}) } };
}

/** Rebuilds `ops` (the block at `path`) with the insertions that target it and the blocks inside it. */
function rebuild(ops: readonly Op[], path: readonly number[], insertions: readonly Insertion[]): Op[] {
  const here = insertions.filter((x) => x.block.length === path.length && x.block.every((v, i) => v === path[i]));
  // By position, in insertion order: one pass over them, not one per op.
  const before = Array.from({ length: ops.length + 1 }, (): Op[] => []);
  for (const x of here) before[x.before]?.push(x.op);
  const out: Op[] = [];
  for (let i = 0; i <= ops.length; i++) {
    // One push per op: a spread of every wait before an op (65,280 at 256 ranks) overflows the stack.
    for (const x of before[i]!) out.push(x);
    const op = ops[i];
    if (!op) continue;
    out.push(op.op === 'for' ? { ...op, body: rebuild(op.body, [...path, i], insertions) } : op);
  }
  return out;
}

export function barrierInsertions(module: Module): Insertion[] {
  const alignment = alignChunks(module);
  const waits = withoutDominated(alignment.waits.map(placeWait));
  // The stores into each chunk, in one pass over them rather than one per chunk.
  const storesInto = new Map<ChunkDecl, ChunkUse[]>();
  for (const use of alignment.stores) {
    const uses = storesInto.get(use.chunk);
    if (uses) uses.push(use);
    else storesInto.set(use.chunk, [use]);
  }
  const arrives = module.chunks.flatMap((chunk) => {
    const uses = storesInto.get(chunk) ?? [];
    const tiles = arrivalTiles(alignment, chunk);
    return tiles && uses.length > 0 ? [placeArrive(module, chunk, uses, tiles)] : [];
  });
  return [...waits, ...arrives];
}

/** Bodies barrier insertion made, each to the body it was given (one without waits or arrives). */
const barrierFree = new WeakMap<readonly Op[], readonly Op[]>();

/**
 * The body `body` was before barrier insertion, where this pass made it from one without waits or
 * arrives: the same body less those ops, whose analyses (memoised per body) the passes have already
 * run, so a backend that wants the alignment need not work it out again.
 */
export function bodyBeforeBarriers(body: readonly Op[]): readonly Op[] | undefined {
  return barrierFree.get(body);
}

const hasBarriers = (ops: readonly Op[]): boolean => ops.some((op) => op.op === 'wait' || op.op === 'arrive' || (op.op === 'for' && hasBarriers(op.body)));

export const insertBarriers: Pass = definePass(
  'insert-barriers',
  'inserts a guarded wait before each first read of a chunk (hoisted out of loops it does not depend on) and an arrive after the last store into it',
  (module) => {
    const insertions = barrierInsertions(module);
    // Frozen before it joins the draft, so that immer need not walk the new ops to finalize it.
    const body = deepFreeze(rebuild(module.kernel.body, [], insertions));
    if (!hasBarriers(module.kernel.body)) barrierFree.set(body, module.kernel.body);
    return E.right(
      editModule(module, (draft) => {
        draft.kernel.body = castDraft(body);
      }),
    );
  },
);
