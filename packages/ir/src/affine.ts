/** Affine index expressions over index values: `constant + Σ coeff·value`. */
import type { AffineExpr, AffineTerm, IndexValue } from './types.js';

/** What the builder accepts where an index is expected. */
export type AffineLike = number | IndexValue | AffineExpr;

export function isAffineExpr(x: AffineLike): x is AffineExpr {
  return typeof x === 'object' && 'terms' in x;
}

export function affine(x: AffineLike): AffineExpr {
  if (typeof x === 'number') return { constant: x, terms: [] };
  if (isAffineExpr(x)) return x;
  return { constant: 0, terms: [{ value: x, coeff: 1 }] };
}

/** Merges terms of the same value (keeping first-seen order) and drops zero coefficients. */
function normalize(constant: number, terms: readonly AffineTerm[]): AffineExpr {
  const merged: AffineTerm[] = [];
  for (const t of terms) {
    const i = merged.findIndex((m) => m.value.id === t.value.id);
    if (i < 0) merged.push(t);
    else merged[i] = { value: merged[i]!.value, coeff: merged[i]!.coeff + t.coeff };
  }
  return { constant, terms: merged.filter((t) => t.coeff !== 0) };
}

export function add(...xs: AffineLike[]): AffineExpr {
  const es = xs.map(affine);
  return normalize(
    es.reduce((s, e) => s + e.constant, 0),
    es.flatMap((e) => e.terms),
  );
}

export function mul(x: AffineLike, c: number): AffineExpr {
  const e = affine(x);
  return normalize(
    e.constant * c,
    e.terms.map((t) => ({ value: t.value, coeff: t.coeff * c })),
  );
}

export function isConstant(e: AffineExpr): boolean {
  return e.terms.length === 0;
}

/** Evaluates `e` with each index value's id mapped to a number; throws on a value missing from `env`. */
export function evalAffine(e: AffineExpr, env: ReadonlyMap<number, number>): number {
  let v = e.constant;
  for (const t of e.terms) {
    const x = env.get(t.value.id);
    if (x === undefined) throw new Error(`evalAffine: no value for %${t.value.name}`);
    v += t.coeff * x;
  }
  return v;
}

/**
 * The closed range `[min, max]` of `e` when each index value ranges over the closed interval given
 * in `ranges`. Exact for affine expressions whose values vary independently.
 */
export function affineRange(
  e: AffineExpr,
  ranges: ReadonlyMap<number, readonly [number, number]>,
): [number, number] {
  let lo = e.constant;
  let hi = e.constant;
  for (const t of e.terms) {
    const r = ranges.get(t.value.id);
    if (r === undefined) throw new Error(`affineRange: no range for %${t.value.name}`);
    const a = t.coeff * r[0];
    const b = t.coeff * r[1];
    lo += Math.min(a, b);
    hi += Math.max(a, b);
  }
  return [lo, hi];
}

export function affineEquals(a: AffineExpr, b: AffineExpr): boolean {
  const na = normalize(a.constant, a.terms);
  const nb = normalize(b.constant, b.terms);
  if (na.constant !== nb.constant || na.terms.length !== nb.terms.length) return false;
  return na.terms.every((t) => nb.terms.some((u) => u.value.id === t.value.id && u.coeff === t.coeff));
}
