/**
 * Tile-access analysis, part 3: the region of its tensor that a site covers over a whole tile (all
 * loop iterations), for each class of tiles that read the same region. Tiles that agree on the
 * program ids the site's offsets use read the same region, so a GEMM's load of A has one class per
 * row of tiles, not one per tile.
 */
import { evalAffine, intersect, type AffineExpr, type Box, type Module } from '@syncopate/ir';
import type { AccessSite } from './access-sites.js';
import { programIdDomains, siteDomains } from './domains.js';

export interface TileClassRegion {
  /** One tile of the class (for messages). */
  readonly tile: readonly number[];
  /** Every box the site touches in those tiles, clipped to the tensor. */
  readonly boxes: readonly Box[];
}

export function siteRegions(module: Module, site: AccessSite): TileClassRegion[] {
  const pidAxis = new Map<number, number>();
  for (const op of module.kernel.body) if (op.op === 'program_id') pidAxis.set(op.result.id, op.axis);
  const used = [...new Set(site.offsets.flatMap((e) => e.terms.map((t) => t.value.id)).filter((id) => pidAxis.has(id)))];
  const pidDomains = programIdDomains(module);
  const tensorBox: Box = { lo: site.tensor.shape.map(() => 0), hi: [...site.tensor.shape] };
  const classes: TileClassRegion[] = [];
  const assign = (i: number, env: Map<number, number>) => {
    if (i === used.length) {
      const tile = module.kernel.grid.map(() => 0);
      for (const [id, v] of env) tile[pidAxis.get(id)!] = v;
      const boxes = regionFor(module, site, env).flatMap((b) => intersect(b, tensorBox) ?? []);
      classes.push({ tile, boxes });
      return;
    }
    const d = pidDomains.get(used[i]!)!;
    for (let v = d.lo; v < d.hi; v++) assign(i + 1, new Map(env).set(used[i]!, v));
  };
  assign(0, new Map());
  return classes;
}

/** With program ids fixed by `env`, the boxes the site touches over all iterations of its loops. */
function regionFor(module: Module, site: AccessSite, env: Map<number, number>): Box[] {
  const domains = siteDomains(module, site);
  const lo: number[] = [];
  const hi: number[] = [];
  for (let a = 0; a < site.offsets.length; a++) {
    const span = contiguousSpan(substitute(site.offsets[a]!, env), site.extent[a]!, domains);
    if (!span) return enumerateBoxes(site, env);
    lo.push(span[0]);
    hi.push(span[1]);
  }
  return [{ lo, hi }];
}

/** `[first, end)` covered along one axis when the loop variable walks without gaps; else undefined. */
function contiguousSpan(
  e: AffineExpr,
  extent: number,
  domains: Map<number, { lo: number; hi: number; step: number }>,
): [number, number] | undefined {
  if (e.terms.length === 0) return [e.constant, e.constant + extent];
  if (e.terms.length > 1) return undefined;
  const { value, coeff } = e.terms[0]!;
  const d = domains.get(value.id);
  if (!d || Math.abs(coeff) * d.step > extent) return undefined;
  if (d.hi <= d.lo) return [0, 0];
  const last = d.lo + Math.floor((d.hi - 1 - d.lo) / d.step) * d.step;
  const a = e.constant + coeff * d.lo;
  const b = e.constant + coeff * last;
  return [Math.min(a, b), Math.max(a, b) + extent];
}

function substitute(e: AffineExpr, env: Map<number, number>): AffineExpr {
  let constant = e.constant;
  const terms = e.terms.filter((t) => {
    const v = env.get(t.value.id);
    if (v !== undefined) constant += t.coeff * v;
    return v === undefined;
  });
  return { constant, terms };
}

/** The fallback: one box per loop iteration. */
function enumerateBoxes(site: AccessSite, pids: Map<number, number>): Box[] {
  const env = new Map(pids);
  const boxes: Box[] = [];
  const visit = (depth: number) => {
    if (depth === site.loops.length) {
      const lo = site.offsets.map((e) => evalAffine(e, env));
      boxes.push({ lo, hi: lo.map((x, a) => x + site.extent[a]!) });
      return;
    }
    const loop = site.loops[depth]!;
    const upper = evalAffine(loop.upper, env);
    for (let v = evalAffine(loop.lower, env); v < upper; v += loop.step) {
      env.set(loop.iv.id, v);
      visit(depth + 1);
    }
  };
  visit(0);
  return boxes;
}
