/**
 * Tile-access analysis, part 2: when does one execution of a load or store touch a region? The
 * answer is exact and closed-form: on axis a the site touches `[lo, hi)` of its tensor exactly when
 * `offset_a ∈ [lo − extent_a + 1, hi)`. Conditions on a single variable become ranges on that
 * program id or loop variable (the guards barrier insertion puts on waits and arrives); the ranges on
 * program ids give the box of tiles that touch the region.
 */
import { affine, deepFreeze, evalAffine, type AffineExpr, type AffineRange, type Box, type IndexValue, type Module, type Op, type ProgramIdOp } from '@syncopate/ir';
import type { AccessSite } from './access-sites.js';
import { narrow, siteDomains, type Domain } from './domains.js';

export interface Touch {
  /** Conditions on program ids and loop variables, all of which hold when the site touches the region. */
  readonly guard: readonly AffineRange[];
  /** The tiles (a box over grid coordinates) for which some execution of the site touches the region. */
  readonly tiles: Box;
  /** False when a condition spans several variables, so `tiles` may hold tiles that never touch it. */
  readonly exact: boolean;
}

/** Range of `v` for which `coeff·v + k ∈ [lo, hi)`. */
function solveForVariable(coeff: number, k: number, lo: number, hi: number): [number, number] {
  // `+ 0` turns the -0 that `Math.ceil` gives for a small negative quotient into 0.
  return coeff > 0
    ? [Math.ceil((lo - k) / coeff) + 0, Math.ceil((hi - k) / coeff) + 0]
    : [Math.floor((hi - k) / coeff) + 1, Math.floor((lo - k) / coeff) + 1];
}

const variableExprs = new WeakMap<IndexValue, AffineExpr>();

/**
 * `affine(v)`, the expression `v` alone, frozen and made once per value: guards name the same program
 * id or loop variable over and over, and the IR is immutable, so one object serves them all.
 */
export function variableExpr(v: IndexValue): AffineExpr {
  let e = variableExprs.get(v);
  if (e === undefined) variableExprs.set(v, (e = deepFreeze(affine(v))));
  return e;
}

/** `siteDomains` per site and grid: alignment asks once per chunk, and the answer is the same. */
const domainsCache = new WeakMap<AccessSite, { readonly grid: readonly number[]; readonly domains: ReadonlyMap<number, Domain> }>();

function domainsOf(module: Module, site: AccessSite): ReadonlyMap<number, Domain> {
  const cached = domainsCache.get(site);
  if (cached?.grid === module.kernel.grid) return cached.domains;
  const domains = siteDomains(module, site);
  domainsCache.set(site, { grid: module.kernel.grid, domains });
  return domains;
}

/** How `site` touches `region` of its tensor; undefined when no execution of it ever does. */
export function touch(module: Module, site: AccessSite, region: Box): Touch | undefined {
  const domains = domainsOf(module, site);
  const narrowed = new Map<number, Domain>();
  const guard: AffineRange[] = [];
  const variables = new Map<number, IndexValue>();
  let exact = true;
  for (let a = 0; a < site.offsets.length; a++) {
    const e = site.offsets[a]!;
    const lo = region.lo[a]! - site.extent[a]! + 1;
    const hi = region.hi[a]!;
    if (e.terms.length === 0) {
      if (e.constant < lo || e.constant >= hi) return undefined;
      continue;
    }
    if (e.terms.length > 1) {
      guard.push({ expr: e, lo, hi });
      exact = false;
      if (!projectTerms(e, lo, hi, (id) => narrowed.get(id) ?? domains.get(id), narrowed, variables)) return undefined;
      continue;
    }
    const { value, coeff } = e.terms[0]!;
    const [vlo, vhi] = solveForVariable(coeff, e.constant, lo, hi);
    const domain = narrowed.get(value.id) ?? domains.get(value.id);
    variables.set(value.id, value);
    if (!domain) {
      guard.push({ expr: variableExpr(value), lo: vlo, hi: vhi });
      continue;
    }
    const d = narrow(domain, vlo, vhi);
    if (!d) return undefined;
    narrowed.set(value.id, d);
  }
  for (const [id, d] of narrowed) {
    const full = domains.get(id)!;
    if (d.lo !== full.lo || d.hi !== full.hi) guard.unshift({ expr: variableExpr(variables.get(id)!), lo: d.lo, hi: d.hi });
  }
  return { guard, tiles: tileBox(module, narrowed), exact };
}

/**
 * For a condition `Σ coeff·v + k ∈ [lo, hi)` on several variables, narrows each variable to the
 * values for which the other terms, anywhere in their domains, could still meet it, and again with
 * the narrowed domains while that narrows something (a few rounds at most). That is necessary, not
 * sufficient, so the tile box stays a superset of the tiles that touch; but a store at
 * `64·%dst + 16·%pm` into one destination's rows then narrows `%dst` to that destination. Does
 * nothing when a variable has no domain; false when some variable is left with no value.
 */
function projectTerms(
  e: AffineExpr,
  lo: number,
  hi: number,
  domainOf: (id: number) => Domain | undefined,
  narrowed: Map<number, Domain>,
  variables: Map<number, IndexValue>,
): boolean {
  for (let round = 0; round <= e.terms.length; round++) {
    const spans: [number, number][] = [];
    for (const { value, coeff } of e.terms) {
      const d = domainOf(value.id);
      if (!d || d.hi <= d.lo) return true;
      const a = coeff * d.lo;
      const b = coeff * (d.hi - 1);
      spans.push([Math.min(a, b), Math.max(a, b)]);
    }
    const minAll = spans.reduce((s, x) => s + x[0], 0);
    const maxAll = spans.reduce((s, x) => s + x[1], 0);
    let changed = false;
    for (let i = 0; i < e.terms.length; i++) {
      const { value, coeff } = e.terms[i]!;
      const [vlo, vhi] = solveForVariable(coeff, e.constant, lo - (maxAll - spans[i]![1]), hi - (minAll - spans[i]![0]));
      const before = domainOf(value.id)!;
      const d = narrow(before, vlo, vhi);
      if (!d) return false;
      if (d.lo === before.lo && d.hi === before.hi) continue;
      narrowed.set(value.id, d);
      variables.set(value.id, value);
      changed = true;
    }
    if (!changed) break;
  }
  return true;
}

/** The kernel's program ids, by body: `tileBox` runs once per site and chunk. */
const programIdsCache = new WeakMap<readonly Op[], readonly ProgramIdOp[]>();

function programIds(module: Module): readonly ProgramIdOp[] {
  const body = module.kernel.body;
  let ids = programIdsCache.get(body);
  if (ids === undefined) programIdsCache.set(body, (ids = body.filter((op): op is ProgramIdOp => op.op === 'program_id')));
  return ids;
}

function tileBox(module: Module, narrowed: Map<number, Domain>): Box {
  const lo = module.kernel.grid.map(() => 0);
  const hi = [...module.kernel.grid];
  for (const op of programIds(module)) {
    const d = narrowed.get(op.result.id);
    if (d) {
      lo[op.axis] = Math.max(lo[op.axis]!, d.lo);
      hi[op.axis] = Math.min(hi[op.axis]!, d.hi);
    }
  }
  return { lo, hi };
}

/**
 * The reference answer, by brute force: does some iteration of the site, in `tile`, touch `region`?
 * Used by tests and for guards that span several variables.
 */
export function touchesByEnumeration(module: Module, site: AccessSite, region: Box, tile: readonly number[]): boolean {
  const env = new Map<number, number>();
  for (const op of module.kernel.body) if (op.op === 'program_id') env.set(op.result.id, tile[op.axis] ?? 0);
  const visit = (depth: number): boolean => {
    if (depth === site.loops.length) {
      return site.offsets.every((e, a) => {
        const at = evalAffine(e, env);
        return at < region.hi[a]! && at + site.extent[a]! > region.lo[a]!;
      });
    }
    const loop = site.loops[depth]!;
    const upper = evalAffine(loop.upper, env);
    for (let v = evalAffine(loop.lower, env); v < upper; v += loop.step) {
      env.set(loop.iv.id, v);
      if (visit(depth + 1)) return true;
    }
    return false;
  };
  return visit(0);
}
