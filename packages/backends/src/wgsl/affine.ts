/** Affine index expressions as WGSL `i32` expressions. */
import type { AffineExpr, AffineRange } from '@syncopate/ir';

export function affineToWgsl(e: AffineExpr, name: (valueId: number) => string): string {
  const parts = e.terms.map((t) => (t.coeff === 1 ? name(t.value.id) : `${t.coeff} * ${name(t.value.id)}`));
  if (e.constant !== 0 || parts.length === 0) parts.push(String(e.constant));
  return parts.length === 1 ? parts[0]! : `(${parts.join(' + ')})`;
}

/** `lo <= e && e < hi` for every condition, or `true`. */
export function guardToWgsl(guard: readonly AffineRange[] | undefined, name: (valueId: number) => string): string {
  if (!guard || guard.length === 0) return 'true';
  return guard
    .map((g) => {
      const e = affineToWgsl(g.expr, name);
      return `(${e} >= ${g.lo} && ${e} < ${g.hi})`;
    })
    .join(' && ');
}
