import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyMapped, hostCopier, jsHostCopy, openDevices, UsageError, type HostCopier, type PlacedDeviceHandle } from '../src/index.js';
import { hasWebGPU } from './webgpu.js';

const loaded = hostCopier();
// scripts/test.sh builds the addon and sets this: there the native copier must be the one in use.
const addonRequired = process.env.SYNCOPATE_REQUIRE_HOST_COPY_ADDON === '1';

function randomBytes(n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (Math.random() * 256) | 0;
  return out;
}

/** Every copier this process has: the JS one, and the native one as loaded, in 3 slices, and with memcpy's stores. */
const copiers: [string, HostCopier][] = [
  ['js', jsHostCopy],
  ...(loaded.copier.kind === 'native'
    ? ([
        ['native', loaded.copier],
        ['native, 3 slices', hostCopier({ threads: 3 }).copier],
        ['native, cached stores, 3 slices', hostCopier({ threads: 3, stores: 'cached' }).copier],
      ] as [string, HostCopier][])
    : []),
];

/** Byte equality without vitest's element-by-element diff (slow at a megabyte). */
const sameBytes = (a: Uint8Array, b: Uint8Array) => Buffer.from(a.buffer, a.byteOffset, a.length).equals(Buffer.from(b.buffer, b.byteOffset, b.length));

describe('hostCopier', () => {
  it.runIf(addonRequired)('loads the native addon where the build made one', () => {
    expect(loaded.why).toBeUndefined();
    expect(loaded.copier.kind).toBe('native');
  });

  it.runIf(loaded.copier.kind === 'native')('writes with streaming stores unless told otherwise, and refuses a thread count or a way of storing it does not have', () => {
    expect(loaded.copier.stores).toBe('streaming');
    expect(hostCopier({ stores: 'cached' }).copier.stores).toBe('cached');
    expect(() => hostCopier({ threads: 0 })).toThrow(UsageError);
    expect(() => hostCopier({ stores: 'uncached' as 'cached' })).toThrow(UsageError);
  });


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

describe.skipIf(!hasWebGPU)('copyMapped', () => {
  let device: GPUDevice;
  let handles: PlacedDeviceHandle[];
  beforeAll(async () => {
    handles = await openDevices(1, { gpus: [] });
    device = handles[0]!.device;
  });
  afterAll(() => handles?.forEach((d) => d.close()));

  /** A mapped read-back buffer holding `data`, a mapped upload buffer of the same size, and every range each was asked for. */
  async function mappedPair(data: Uint8Array) {
    const source = device.createBuffer({ size: data.length, usage: GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    device.queue.writeBuffer(source, 0, data);
    const readback = device.createBuffer({ size: data.length, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const encoder = device.createCommandEncoder();
    encoder.copyBufferToBuffer(source, 0, readback, 0, data.length);
    device.queue.submit([encoder.finish()]);
    await readback.mapAsync(GPUMapMode.READ);
    const upload = device.createBuffer({ size: data.length + 64, usage: GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC, mappedAtCreation: true });
    const asked: number[] = [];
    for (const b of [readback, upload]) {
      const getMappedRange = b.getMappedRange.bind(b);
      b.getMappedRange = (offset?: number, size?: number) => (asked.push(size ?? -1), getMappedRange(offset, size));
    }
    return { readback, upload, asked, destroy: () => [source, readback, upload].forEach((x) => x.destroy()) };
  }


  // A megabyte goes to the native copier's pool; 4 KiB is copied on the calling thread.
  const sized = copiers.flatMap(([name, copier]) => [(1 << 20) + 64 * 7, 4096 + 64 * 3].map((size) => [name, size, copier] as const));
  it.each(sized)('%s, %i bytes: copies the first bytes of one mapped buffer into another, the rest left as it was', async (_, size, copier) => {
    const data = randomBytes(size);
    const { readback, upload, destroy } = await mappedPair(data);
    const bytes = data.length - 64; // not the whole of either range
    await copyMapped(copier, upload, readback, bytes);
    // What the upload buffer holds, read back through the GPU (its range was handed out once already).
    upload.unmap();
    const check = device.createBuffer({ size: upload.size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const encoder = device.createCommandEncoder();
    encoder.copyBufferToBuffer(upload, 0, check, 0, upload.size);
    device.queue.submit([encoder.finish()]);
    await check.mapAsync(GPUMapMode.READ);
    const written = new Uint8Array(check.getMappedRange()).slice();
    check.destroy();
    expect(sameBytes(written.subarray(0, bytes), data.subarray(0, bytes))).toBe(true);
    expect(written.subarray(bytes).every((b) => b === 0)).toBe(true);
    destroy();
  });

  it('refuses a buffer that is not mapped, or bytes past either buffer, with a UsageError naming it', async () => {
    const { readback, upload, destroy } = await mappedPair(randomBytes(4096));
    await expect(copyMapped(loaded.copier, upload, readback, 4097)).rejects.toThrow(/4097 bytes do not fit src/);
    await expect(copyMapped(loaded.copier, upload, readback, 4096 + 65)).rejects.toThrow(UsageError);
    readback.unmap();
    await expect(copyMapped(loaded.copier, upload, readback, 16)).rejects.toThrow(/src \(unlabelled\) is unmapped, not mapped/);
    destroy();
  });

  it.runIf(loaded.copier.kind === 'native')('native: maps only the first and last 8 bytes of each range, and copies a small range before it returns', async () => {
    // A held 4 MiB ArrayBuffer a piece counts as V8 external memory; 64 MiB of them at once set off major collections.
    const large = await mappedPair(randomBytes(1 << 20));
    await copyMapped(loaded.copier, large.upload, large.readback, 1 << 20);
    expect(large.asked).toEqual([8, 8, 8, 8]);
    large.destroy();
    const data = randomBytes(4096);
    const small = await mappedPair(data);
    void copyMapped(loaded.copier, small.upload, small.readback, 4096);
    expect(small.asked).toEqual([8, 8, 8, 8]);
    // Already there, read through the upload's own mapping between the anchors (no await: the copy ran on this thread).
    expect(sameBytes(new Uint8Array(small.upload.getMappedRange(8, 4080)), data.subarray(8, 4088))).toBe(true);
    small.destroy();
  });
});

