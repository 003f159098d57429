/**
 * IEEE 754 binary16 on the host: f16 tensors go to the GPU as half bits and come back as them.
 * Node 20 has no Float16Array, so `@petamoriken/float16` does the rounding (to nearest, ties to even,
 * with subnormals, infinities and NaN); its per-element accessors are slow, so bits are read back
 * through a table of all 65536 halves, each of which f32 holds exactly.
 */
import { Float16Array } from '@petamoriken/float16';

/** The half bits of each element, rounded to the nearest half (ties to even; past 65504 to infinity). */
export function toHalfBits(data: Float32Array): Uint16Array {
  return new Uint16Array(new Float16Array(data).buffer);
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
