/** The known name nearest to a mistyped one, for "did you mean" in errors. */

/** Edits (insert, delete, substitute; case counts half) between a and b. */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      const same = a[i - 1] === b[j - 1] ? 0 : a[i - 1]!.toLowerCase() === b[j - 1]!.toLowerCase() ? 0.5 : 1;
      next.push(Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + same));
    }
    row = next;
  }
  return row[b.length]!;
}

/** The known name within two edits of `name` (a third of its length at most), nearest first; undefined if none. */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const limit = Math.min(2, Math.max(1, Math.floor(name.length / 3)));
  let best: { name: string; d: number } | undefined;
  for (const k of known) {
    const d = distance(name, k);
    if (d <= limit && (best === undefined || d < best.d)) best = { name: k, d };
  }
  return best?.name;
}
