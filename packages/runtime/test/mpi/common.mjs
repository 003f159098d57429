// Shared by the scripts mpi-transport.test.ts runs under mpirun: the runtime (its bundled build, at
// the URL in argv[2]), joined, and a byte pattern each side can check.
export const runtime = await import(process.argv[2]);

/** Bytes that differ by `seed` and by position (so a shifted or mixed-up copy shows). */
export function pattern(bytes, seed) {
  const out = new Uint8Array(bytes);
  const words = new Uint32Array(out.buffer, 0, bytes >>> 2);
  for (let i = 0; i < words.length; i++) words[i] = Math.imul(i + 1, 2654435761) ^ (seed * 0x01010101);
  for (let i = words.length * 4; i < bytes; i++) out[i] = (i * 7 + seed) & 255;
  return out;
}

/** Byte equality without an element-by-element loop in JS. */
export const sameBytes = (a, b) => Buffer.from(a.buffer, a.byteOffset, a.length).equals(Buffer.from(b.buffer, b.byteOffset, b.length));

export function check(condition, what) {
  if (!condition) throw new Error(`process ${process.env.OMPI_COMM_WORLD_RANK}: ${what}`);
}

/** What `run` threw, or fails if it did not throw a `type`. */
export async function rejection(run, type, what) {
  try {
    await run();
  } catch (e) {
    check(e instanceof type, `${what}: expected a ${type.name}, got ${e?.name}: ${e?.message}`);
    return e;
  }
  check(false, `${what}: expected a ${type.name}, nothing thrown`);
}
