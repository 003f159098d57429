/**
 * Seeded inputs. The generator is mulberry32 (Tommy Ettinger's 32-bit state generator: add a Weyl
 * constant, then two multiply-xorshift rounds), which is tiny, fast and good enough for test data.
 * Each (seed, tensor, rank) gets its own stream, seeded by hashing the three together, so one tensor's
 * values do not change when another tensor or rank is added.
 */

/** A generator of floats uniform in [0, 1), from a 32-bit seed. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A copy of `items` in a random order (Fisher–Yates, drawing from `random`, e.g. a mulberry32 stream). */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** murmur3's 32-bit finaliser: every input bit affects every output bit. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The seed of the stream for one tensor on one rank: FNV-1a over the name, mixed with seed and rank. */
export function streamSeed(seed: number, tensor: string, rank: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < tensor.length; i++) h = Math.imul(h ^ tensor.charCodeAt(i), 0x01000193);
  h = fmix32(h ^ fmix32(seed >>> 0));
  return fmix32(h ^ fmix32((rank + 0x9e3779b9) >>> 0));
}

/** Integers in [lo, hi], stored as floats. Small integers are exact in f32 and f16 alike. */
export function smallIntegers(next: () => number, lo = -2, hi = 2): () => number {
  const span = hi - lo + 1;
  return () => lo + Math.floor(next() * span);
}
