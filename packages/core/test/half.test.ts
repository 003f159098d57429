import { describe, expect, it } from 'vitest';
import { fromHalfBits, toHalfBits } from '../src/api/half.js';

/** A half's value from the IEEE 754 definition, independent of the converter under test. */
function halfValue(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0x1f) return mantissa === 0 ? sign * Infinity : NaN;
  return sign * (exponent === 0 ? mantissa * 2 ** -24 : 2 ** (exponent - 15) * (1 + mantissa / 1024));
}

const isNaNBits = (bits: number) => (bits & 0x7c00) === 0x7c00 && (bits & 0x3ff) !== 0;

/** The f32 next to `x` (a positive finite f32) towards +inf (`step` 1) or towards 0 (`step` −1). */
function f32Neighbour(x: number, step: 1 | -1): number {
  const f = new Float32Array([x]);
  const u = new Uint32Array(f.buffer);
  u[0]! += step;
  return f[0]!;
}

const half = (x: number) => toHalfBits(new Float32Array([x]))[0]!;

const ALL_BITS = Uint16Array.from({ length: 65536 }, (_, b) => b);

describe('half bits to f32', () => {
  it('gives every one of the 65536 halves its IEEE value (signed zeros, subnormals, infinities, NaN)', () => {
    const values = fromHalfBits(ALL_BITS);
    expect(values).toHaveLength(65536);
    for (let b = 0; b < 65536; b++) {
      const want = halfValue(b);
      if (!Object.is(values[b], want)) expect.fail(`0x${b.toString(16)}: got ${values[b]}, want ${want}`);
    }
  });

  it('converts an empty array and keeps lengths', () => {
    expect(fromHalfBits(new Uint16Array(0))).toHaveLength(0);
    expect(toHalfBits(new Float32Array(0))).toHaveLength(0);
    expect(toHalfBits(new Float32Array(7))).toHaveLength(7);
  });
});

describe('f32 to half bits', () => {
  it('round-trips every half but NaN exactly (half → f32 → half), and keeps NaN a NaN', () => {
    const back = toHalfBits(fromHalfBits(ALL_BITS));
    for (let b = 0; b < 65536; b++) {
      const ok = isNaNBits(b) ? isNaNBits(back[b]!) : back[b] === b;
      if (!ok) expect.fail(`0x${b.toString(16)} came back as 0x${back[b]!.toString(16)}`);
    }
  });

  it('rounds to the nearest half, ties to even, between every two adjacent halves of either sign', () => {
    // 0x0000..0x7bff and their successors, the last of which is +inf: 65520 is where f16 overflows.
    for (let b = 0; b < 0x7c00; b++) {
      const lo = halfValue(b);
      const hi = halfValue(b + 1);
      // Halves have 11 significant bits, so their midpoint (12 bits) is an f32.
      const mid = b + 1 === 0x7c00 ? 65520 : (lo + hi) / 2;
      expect(Math.fround(mid)).toBe(mid);
      const even = b % 2 === 0 ? b : b + 1;
      const got = toHalfBits(new Float32Array([mid, f32Neighbour(mid, -1), f32Neighbour(mid, 1), -mid]));
      const want = [even, b, b + 1, even | 0x8000];
      if (got.some((g, i) => g !== want[i])) {
        expect.fail(`between 0x${b.toString(16)} and 0x${(b + 1).toString(16)}: got ${[...got].map((g) => g.toString(16))}, want ${want.map((w) => w.toString(16))}`);
      }
    }
  });

  it.each([
    ['the workload values', [-2, -1, 0, 1, 2], [0xc000, 0xbc00, 0x0000, 0x3c00, 0x4000]],
    ['signed zeros', [0, -0], [0x0000, 0x8000]],
    ['the largest half and just below the overflow tie', [65504, f32Neighbour(65520, -1), -65504], [0x7bff, 0x7bff, 0xfbff]],
    ['overflow to infinity', [65520, 65536, 1e10, -65520, -1e10, 3.4028234663852886e38], [0x7c00, 0x7c00, 0x7c00, 0xfc00, 0xfc00, 0x7c00]],
    ['infinities', [Infinity, -Infinity], [0x7c00, 0xfc00]],
    ['the smallest subnormal and the tie below it (to even: zero)', [2 ** -24, 2 ** -25, f32Neighbour(2 ** -25, 1), -(2 ** -25)], [0x0001, 0x0000, 0x0001, 0x8000]],
    ['underflow to zero', [2 ** -26, 1e-45, -1e-45], [0x0000, 0x0000, 0x8000]],
    ['the subnormal–normal boundary', [1023 * 2 ** -24, 2 ** -14, 1023.5 * 2 ** -24, f32Neighbour(1023.5 * 2 ** -24, -1)], [0x03ff, 0x0400, 0x0400, 0x03ff]],
    ['ties next to 1 (to even)', [1 + 2 ** -11, 1 + 3 * 2 ** -11, f32Neighbour(1 + 2 ** -11, 1)], [0x3c00, 0x3c02, 0x3c01]],
  ] as const)('%s', (_, values, bits) => {
    expect([...toHalfBits(new Float32Array(values))]).toEqual(bits);
  });

  it('makes NaN a half NaN', () => {
    expect(isNaNBits(half(NaN))).toBe(true);
    expect(Number.isNaN(fromHalfBits(new Uint16Array([half(NaN)]))[0])).toBe(true);
  });
});
