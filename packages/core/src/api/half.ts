/**
 * IEEE 754 binary16 on the host: f16 tensors go to the GPU as half bits and come back as them.
 * Node 20 has no Float16Array, so `@petamoriken/float16` does the rounding (to nearest, ties to even,
 * with subnormals, infinities and NaN); its per-element accessors are slow, so bits are read back
 * through a table of all 65536 halves, each of which f32 holds exactly.
 */
import { Float16Array } from '@petamoriken/float16';

/**
 * The half bits of each element, rounded to the nearest half (ties to even; past 65504 to infinity).
 * On the f32 bits, not through Float16Array's per-element setter: that took minutes for a
 * Llama-7B-sized layer's weights (tests check it against Float16Array bit for bit).
 */
export function toHalfBits(data: Float32Array): Uint16Array {
  const words = new Uint32Array(data.buffer, data.byteOffset, data.length);
  const out = new Uint16Array(data.length);
  for (let i = 0; i < words.length; i++) {
    const x = words[i]!;
    const a = x & 0x7fffffff;
    let h: number;
    if (a >= 0x47800000) {
      h = a > 0x7f800000 ? 0x7e00 : 0x7c00; // NaN, or at least 2^16: infinity
    } else if (a < 0x38800000) {
      // Below 2^-14: a subnormal half (or zero), in units of 2^-24, rounded to even by hand.
      const q = Math.abs(data[i]!) * 16777216;
      const floor = Math.floor(q);
      const rest = q - floor;
      h = rest > 0.5 || (rest === 0.5 && (floor & 1) === 1) ? floor + 1 : floor;
    } else {
      // Rebias the exponent (127 → 15) and round the 13 dropped bits to even; a carry into the
      // exponent is right, up to infinity.
      h = (a - 0x38000000 + 0xfff + ((a >>> 13) & 1)) >>> 13;
    }
    out[i] = h | ((x >>> 16) & 0x8000);
  }
  return out;
}

let halves: Float32Array | undefined;

/** Every half's value, indexed by its bits. */
function halfValues(): Float32Array {
  halves ??= Float32Array.from(new Float16Array(Uint16Array.from({ length: 65536 }, (_, bits) => bits).buffer));
  return halves;
}

/** The value of each half, as f32 (exact: every half is an f32). */
export function fromHalfBits(bits: Uint16Array): Float32Array {
  const values = halfValues();
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = values[bits[i]!]!;
  return out;
}
