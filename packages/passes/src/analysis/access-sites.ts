/**
 * Tile-access analysis, part 1: every load and store of a kernel, with the loops around it. The box
 * of a tensor a tile touches is derived from these sites (affine offsets plus the tile's extent),
 * never declared by hand. A gather is a load site whose rows depend on data: it is taken to read
 * every row of its tensor in its columns, so it waits for every chunk that lands in those columns.
 */
import type { AffineExpr, ForOp, GatherOp, IndexValue, LoadOp, Module, Op, StoreOp, TensorDecl } from '@syncopate/ir';

export interface LoopContext {
  readonly iv: IndexValue;
  readonly lower: AffineExpr;
  readonly upper: AffineExpr;
  readonly step: number;
}

export interface AccessSite {
  /** Position among the kernel's sites, in program order. */
  readonly index: number;
  readonly kind: 'load' | 'store';
  readonly op: LoadOp | GatherOp | StoreOp;
  readonly tensor: TensorDecl;
  readonly offsets: readonly AffineExpr[];
  /** The tile's extent along each axis. */
  readonly extent: readonly number[];
  /** Enclosing loops, outermost first. */
  readonly loops: readonly LoopContext[];
  /** Index of the top-level kernel op that holds the site (the op itself, or the loop around it). */
  readonly topLevel: number;
  /** Indices from the kernel body down to the op: `[3, 1]` is op 1 of the body of top-level op 3. */
  readonly path: readonly number[];
}

/** Sites by kernel body, then by tensor list: what they are made of, so a pass that changes neither keeps them. */
const sitesCache = new WeakMap<readonly Op[], WeakMap<readonly TensorDecl[], readonly AccessSite[]>>();

/**
 * All loads and stores of the module's kernel, in program order. Memoised per (immutable) kernel body
 * and tensor list, so modules that share both (as passes' results do when they change only the tile
 * order) share their sites too.
 */
export function accessSites(module: Module): readonly AccessSite[] {
  const byTensors = sitesCache.get(module.kernel.body) ?? new WeakMap<readonly TensorDecl[], readonly AccessSite[]>();
  sitesCache.set(module.kernel.body, byTensors);
  const cached = byTensors.get(module.tensors);
  if (cached) return cached;
  const tensors = new Map(module.tensors.map((t) => [t.name, t]));
  const sites: AccessSite[] = [];
  const walk = (ops: readonly Op[], loops: readonly LoopContext[], prefix: readonly number[]) => {
    ops.forEach((op, i) => {
      const path = [...prefix, i];
      const topLevel = path[0]!;
      if (op.op === 'load' || op.op === 'store') {
        const tensor = tensors.get(op.tensor);
        if (!tensor) return; // the verifier reports unknown tensors
        const extent = op.op === 'load' ? op.result.type.shape : op.value.type.shape;
        sites.push({ index: sites.length, kind: op.op, op, tensor, offsets: op.offsets, extent, loops, topLevel, path });
      } else if (op.op === 'gather') {
        const tensor = tensors.get(op.tensor);
        if (!tensor || tensor.shape.length !== 2) return; // the verifier reports these
        const { offsets, extent } = gatherBox(op, tensor);
        sites.push({ index: sites.length, kind: 'load', op, tensor, offsets, extent, loops, topLevel, path });
      } else if (op.op === 'for') {
        walk(op.body, [...loops, loopContext(op)], path);
      }
    });
  };
  walk(module.kernel.body, [], []);
  byTensors.set(module.tensors, sites);
  return sites;
}

/** All rows from 0, the gathered columns: where a gather may read, whatever its indices hold. */
function gatherBox(op: GatherOp, tensor: TensorDecl): { offsets: AffineExpr[]; extent: number[] } {
  return { offsets: [{ constant: 0, terms: [] }, op.column], extent: [tensor.shape[0]!, op.result.type.shape[1] ?? 1] };
}

/** The value that names a site in diagnostics: a load's or gather's result, a store's stored tile. */
export function siteValueName(site: AccessSite): string {
  return site.op.op === 'store' ? site.op.value.name : site.op.result.name;
}

function loopContext(op: ForOp): LoopContext {
  return { iv: op.inductionVar, lower: op.lower, upper: op.upper, step: op.step };
}

/** `rankIds` by kernel body: `siteForRank` asks once per site and chunk. */
const rankIdsCache = new WeakMap<readonly Op[], ReadonlySet<number>>();

/** Ids of the kernel's `rank_id` values. */
function rankIds(module: Module): ReadonlySet<number> {
  const known = rankIdsCache.get(module.kernel.body);
  if (known) return known;
  const ids = new Set<number>();
  const walk = (ops: readonly Op[]) =>
    ops.forEach((op) => {
      if (op.op === 'rank_id') ids.add(op.result.id);
      if (op.op === 'for') walk(op.body);
    });
  walk(module.kernel.body);
  rankIdsCache.set(module.kernel.body, ids);
  return ids;
}

/**
 * The site as rank `rank` runs it: every `rank_id` term folded into its offset's constant. Sites that
 * do not use the rank come back as they are. The analyses specialise a load to the destination rank
 * of the chunk it may wait for, and a store to the source rank of the chunk it may complete.
 */
export function siteForRank(module: Module, site: AccessSite, rank: number): AccessSite {
  if (!site.offsets.some((e) => e.terms.length > 0)) return site;
  const ids = rankIds(module);
  if (ids.size === 0 || !site.offsets.some((e) => e.terms.some((t) => ids.has(t.value.id)))) return site;
  const offsets = site.offsets.map((e) => ({
    constant: e.constant + e.terms.filter((t) => ids.has(t.value.id)).reduce((s, t) => s + t.coeff * rank, 0),
    terms: e.terms.filter((t) => !ids.has(t.value.id)),
  }));
  return { ...site, offsets };
}
