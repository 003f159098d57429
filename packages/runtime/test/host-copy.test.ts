import { describe, expect, it } from 'vitest';
import { hostCopier, jsHostCopy, UsageError, type HostCopier } from '../src/index.js';

const loaded = hostCopier();
// scripts/test.sh builds the addon and sets this: there the native copier must be the one in use.
const addonRequired = process.env.SYNCOPATE_REQUIRE_HOST_COPY_ADDON === '1';

function randomBytes(n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (Math.random() * 256) | 0;
  return out;
}

/** Byte equality without vitest's element-by-element diff (slow at a megabyte). */
const sameBytes = (a: Uint8Array, b: Uint8Array) => Buffer.from(a.buffer, a.byteOffset, a.length).equals(Buffer.from(b.buffer, b.byteOffset, b.length));

describe('hostCopier', () => {
  it.runIf(addonRequired)('loads the native addon where the build made one', () => {
    expect(loaded.why).toBeUndefined();
    expect(loaded.copier.kind).toBe('native');
  });

  const copiers: [string, HostCopier][] = [['js', jsHostCopy], ...(loaded.copier.kind === 'native' ? [['native', loaded.copier] as [string, HostCopier], ['native, 3 slices', hostCopier(3).copier] as [string, HostCopier]] : [])];

  describe.each(copiers)('%s', (_, copier) => {
    it('copies every byte of views at offsets, in slices that do not divide the length', async () => {
      // 1 MiB + 13 bytes, into the middle of a larger buffer: slices end on 64-byte lines, the last is short.
      const src = randomBytes((1 << 20) + 13);
      const outer = new Uint8Array(src.length + 100).fill(0xee);
      await copier.copy(outer.subarray(37, 37 + src.length), src);
      expect(sameBytes(outer.subarray(37, 37 + src.length), src)).toBe(true);
      // The bytes around the destination view are untouched.
      expect(outer.subarray(0, 37).every((b) => b === 0xee)).toBe(true);
      expect(outer.subarray(37 + src.length).every((b) => b === 0xee)).toBe(true);
    });

    it('copies small and empty views', async () => {
      const src = randomBytes(100);
      const dst = new Uint8Array(100);
      await copier.copy(dst, src);
      expect(dst).toEqual(src);
      await expect(copier.copy(new Uint8Array(0), new Uint8Array(0))).resolves.toBeUndefined();
    });

    it('copies below half a megabyte on the calling thread, done when copy() returns', () => {
      const src = randomBytes(64 << 10);
      const dst = new Uint8Array(src.length);
      void copier.copy(dst, src);
      expect(sameBytes(dst, src)).toBe(true);
    });

    it('rejects views of different lengths with a UsageError naming both', async () => {
      await expect(copier.copy(new Uint8Array(8), new Uint8Array(12))).rejects.toThrow(UsageError);
      await expect(copier.copy(new Uint8Array(8), new Uint8Array(12))).rejects.toThrow(/8 bytes, src 12/);
      await expect(copier.copy(new Uint8Array(1 << 20), new Uint8Array((1 << 20) + 4))).rejects.toThrow(UsageError);
    });
  });
});
