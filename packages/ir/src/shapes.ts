/** Shape helpers shared by the builder and the verifier. */
import type { Shape } from './types.js';

/** Numpy-style broadcast of two shapes (aligned on the right), or undefined where they clash. */
export function broadcastShapes(a: Shape, b: Shape): number[] | undefined {
  const n = Math.max(a.length, b.length);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const x = a[a.length - n + i] ?? 1;
    const y = b[b.length - n + i] ?? 1;
    if (x !== y && x !== 1 && y !== 1) return undefined;
    out.push(Math.max(x, y));
  }
  return out;
}

export function shapesEqual(a: Shape, b: Shape): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

export function formatShape(shape: Shape): string {
  return shape.join('x');
}
