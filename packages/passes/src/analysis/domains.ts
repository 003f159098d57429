/**
 * The values an index variable takes: a program id runs over its grid axis, a loop variable over its
 * iterations. Conditions on one variable become integer ranges on it, intersected with its domain.
 */
import { isConstant, type AffineExpr, type Module } from '@syncopate/ir';
import type { AccessSite, LoopContext } from './access-sites.js';

/** `[lo, hi)` with, for loop variables, the stride of the values taken from `lo`. */
export interface Domain {
  readonly lo: number;
  readonly hi: number;
  readonly step: number;
}

/** Domains of every program id and of the site's loop variables, keyed by value id. */
export function siteDomains(module: Module, site: AccessSite): Map<number, Domain> {
  const domains = programIdDomains(module);
  for (const loop of site.loops) {
    const d = loopDomain(loop, domains);
    if (d) domains.set(loop.iv.id, d);
  }
  return domains;
}

export function programIdDomains(module: Module): Map<number, Domain> {
  const domains = new Map<number, Domain>();
  for (const op of module.kernel.body) {
    if (op.op === 'program_id') domains.set(op.result.id, { lo: 0, hi: module.kernel.grid[op.axis] ?? 1, step: 1 });
  }
  return domains;
}

/**
 * A loop whose bounds are constants has an exact domain. Bounds that depend on other variables
 * (triangular loops) have none: conditions on such a variable stay in the guard and are not projected.
 */
function loopDomain(loop: LoopContext, _outer: Map<number, Domain>): Domain | undefined {
  if (!isConstant(loop.lower) || !isConstant(loop.upper)) return undefined;
  const lo = loop.lower.constant;
  const last = lo + Math.floor((loop.upper.constant - 1 - lo) / loop.step) * loop.step;
  return last < lo ? { lo, hi: lo, step: loop.step } : { lo, hi: last + 1, step: loop.step };
}

/** Narrows `d` to `[lo, hi)`, snapping to its stride; undefined when no value is left. */
export function narrow(d: Domain, lo: number, hi: number): Domain | undefined {
  const first = d.lo + Math.max(0, Math.ceil((lo - d.lo) / d.step)) * d.step;
  const end = Math.min(d.hi, hi);
  if (first >= end) return undefined;
  const last = first + Math.floor((end - 1 - first) / d.step) * d.step;
  return { lo: first, hi: last + 1, step: d.step };
}

export function isSingleVariable(e: AffineExpr): boolean {
  return e.terms.length === 1;
}
