/**
 * No entry of the host copy reads or writes outside the ranges its caller mapped: the addon's own
 * entries, the copier methods and copyMapped() refuse every out-of-bounds call with a typed error
 * before a byte moves, and a process that makes such calls lives on.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyMapped, hostCopier, jsHostCopy, openDevices, UsageError, type HostCopier, type PlacedDeviceHandle } from '../src/index.js';
import { hasWebGPU } from './webgpu.js';
import { bundleRuntime } from './bundle.js';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const addonPath = `${packageDir}native/build/Release/host_copy.node`;
const addonBuilt = existsSync(addonPath);
// scripts/test.sh builds the addon and sets this: there the addon's tests must run.
const addonRequired = process.env.SYNCOPATE_REQUIRE_HOST_COPY_ADDON === '1';

type Range = Uint8Array | readonly [Uint8Array, Uint8Array];
interface RawAddon {
  copy(dst: Range, src: Range, offset: number, length: number, streaming?: boolean, slices?: number): Promise<void>;
  copySync(dst: Range, src: Range, offset: number, length: number, streaming?: boolean): void;
}

function loadRawAddon(): RawAddon {
  const module = { exports: {} as RawAddon };
  process.dlopen(module, addonPath);
  return module.exports;
}

/** (dst, src, offset, length, slices?) that reach outside a range, each with why. */
function outOfBounds(): [string, Range, Range, number, number, number?][] {
  const a = () => new Uint8Array(4096);
  const big = new Uint8Array(8192);
  // Two 8-byte views of one 4 KiB allocation: its first and last anchor.
  const whole = new Uint8Array(4096);
  const pair = [whole.subarray(0, 8), whole.subarray(4088)] as const;
  return [
    ['offset past the end', a(), a(), 4097, 0],
    ['length past the end', a(), a(), 0, 4097],
    ['offset + length past the end', a(), a(), 4000, 200],
    ['offset + length past 2^53', a(), a(), Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
    ['a length of 2^64', a(), a(), 0, 2 ** 64],
    ['a fractional offset', a(), a(), 0.5, 8],
    ['a fractional length', a(), a(), 0, 4095.5],
    ['a negative offset', a(), a(), -8, 8],
    ['a negative length', a(), a(), 0, -1],
    ['a NaN length', a(), a(), 0, Number.NaN],
    ['an infinite length', a(), a(), 0, Number.POSITIVE_INFINITY],
    ['dst shorter than src', a(), big, 0, 8192],
    ['src shorter than dst', big, a(), 0, 8192],
    ['an 8-byte anchor used as a long range', a().subarray(0, 8), a().subarray(0, 8), 0, 8192],
    ['past the tail of a [head, tail] pair', pair, pair, 0, 4097],
    ['a pair whose tail comes before its head', [whole.subarray(4088), whole.subarray(0, 8)], a(), 0, 16],
    ['a pair with an empty view', [whole.subarray(0, 8), whole.subarray(8, 8)], a(), 0, 8],
    ['slices 0', a(), a(), 0, 4096, 0],
    ['slices 257', a(), a(), 0, 4096, 257],
    ['slices 2^32 + 1', a(), a(), 0, 4096, 2 ** 32 + 1],
    ['slices 1.5', a(), a(), 0, 4096, 1.5],
    ['slices -1', a(), a(), 0, 4096, -1],
  ];
}

describe.runIf(addonBuilt || addonRequired)('host copy addon entries', () => {
  const addon = loadRawAddon();

  it.each(outOfBounds())('copy() refuses %s, copying nothing', async (_, dst, src, offset, length, slices) => {
    const views: readonly Uint8Array[] = dst instanceof Uint8Array ? [dst] : dst;
    const before = views.map((v) => v.slice());
    expect(() => addon.copy(dst, src, offset, length, true, slices ?? 1)).toThrow(expect.objectContaining({ code: expect.stringMatching(/^ERR_SYNCOPATE_HOST_COPY_/) }));
    views.forEach((v, i) => expect(v).toEqual(before[i]));
  });

  it.each(outOfBounds().filter((c) => c[5] === undefined))('copySync() refuses %s', (_, dst, src, offset, length) => {
    expect(() => addon.copySync(dst, src, offset, length, false)).toThrow(expect.objectContaining({ code: expect.stringMatching(/^ERR_SYNCOPATE_HOST_COPY_/) }));
  });

  it('refuses what is not a byte view or a pair of them, a pair of three, and a detached view', () => {
    const a = new Uint8Array(64);
    for (const bad of [new Float32Array(16), [a, a, a], [a], 'bytes', null, { length: 64 }]) {
      expect(() => addon.copySync(bad as unknown as Uint8Array, a, 0, 8)).toThrow(TypeError);
      expect(() => addon.copy(a, bad as unknown as Uint8Array, 0, 8)).toThrow(TypeError);
    }
    const detached = new Uint8Array(new ArrayBuffer(64));
    structuredClone(detached.buffer, { transfer: [detached.buffer] });
    expect(() => addon.copySync(detached, a, 0, 0)).toThrow(/detached/);
    expect(() => addon.copy(a, detached, 0, 0)).toThrow(/detached/);
  });

  it('copies exactly the bytes asked within a [head, tail] range, to the last byte', async () => {
    const src = new Uint8Array(4096).map((_, i) => (i * 7) & 255);
    const dst = new Uint8Array(4096 + 8).fill(0xee);
    const range = (b: Uint8Array, bytes: number) => [b.subarray(0, 8), b.subarray(bytes - 8, bytes)] as const;
    await addon.copy(range(dst, 4096), range(src, 4096), 8, 4088, true, 3);
    expect(dst.subarray(0, 8).every((b) => b === 0xee)).toBe(true);
    expect(dst.subarray(8, 4096)).toEqual(src.subarray(8));
    expect(dst.subarray(4096).every((b) => b === 0xee)).toBe(true);
    addon.copySync(range(dst, 4096), range(src, 4096), 0, 4096);
    expect(dst.subarray(0, 4096)).toEqual(src);
  });
});

describe('host copier methods', () => {
  const copiers: [string, HostCopier][] = [['js', jsHostCopy], ['this process', hostCopier().copier]];

  it.each(copiers)('%s: copy() refuses views of different lengths, at any size', async (_, copier) => {
    for (const [d, s] of [[8, 12], [1 << 20, (1 << 20) + 8], [(1 << 20) + 8, 1 << 20]]) {
      await expect(copier.copy(new Uint8Array(d!), new Uint8Array(s!))).rejects.toThrow(UsageError);
    }
  });

  it('hostCopier refuses thread counts past the addon\'s 256 slices, fractional or absurd', () => {
    for (const threads of [0, -1, 1.5, 257, 2 ** 32 + 1, Number.NaN]) expect(() => hostCopier({ threads })).toThrow(UsageError);
  });
});

describe.skipIf(!hasWebGPU)('copyMapped out of bounds', () => {
  let device: GPUDevice;
  let handles: PlacedDeviceHandle[];
  beforeAll(async () => {
    handles = await openDevices(1, { gpus: [] });
    device = handles[0]!.device;
  });
  afterAll(() => handles?.forEach((d) => d.close()));

  /** A read-back buffer of `size` bytes mapped over its first `mapped`, and an upload buffer of `size` mapped whole. */
  async function mappedPair(size: number, mapped = size) {
    const readback = device.createBuffer({ size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST, label: 'readback' });
    await readback.mapAsync(GPUMapMode.READ, 0, mapped);
    const upload = device.createBuffer({ size, usage: GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC, mappedAtCreation: true, label: 'upload' });
    return { readback, upload, destroy: () => [readback, upload].forEach((b) => b.destroy()) };
  }

  type Entry = [string, (dst: GPUBuffer, src: GPUBuffer, bytes: number) => Promise<void>];
  const { copier } = hostCopier();
  const entries: Entry[] = [
    ['copyMapped() with the js copier', (d, s, n) => copyMapped(jsHostCopy, d, s, n)],
    ["copyMapped() with this process's copier", (d, s, n) => copyMapped(copier, d, s, n)],
  ];
  if (copier.copyMapped) entries.push(['copier.copyMapped()', (d, s, n) => copier.copyMapped!(d, s, n)]);

  it.each(entries)('%s refuses bytes past either buffer, fractional, negative or absurd', async (_, copy) => {
    const { readback, upload, destroy } = await mappedPair(4096);
    for (const bytes of [8192, 4097, 4096 + 64, 4095.5, 0.5, -8, Number.NaN, 2 ** 53, Number.POSITIVE_INFINITY]) {
      await expect(copy(upload, readback, bytes), `bytes ${bytes}`).rejects.toThrow(UsageError);
    }
    destroy();
  });

  it.each(entries)('%s refuses a range mapped smaller than its buffer, naming the buffer', async (_, copy) => {
    // 1 MiB mapped of 2 MiB: the native copier would take the pool's path for the whole.
    for (const [size, mapped] of [[8192, 4096], [2 << 20, 1 << 20]]) {
      const { readback, upload, destroy } = await mappedPair(size!, mapped);
      await expect(copy(upload, readback, size!)).rejects.toThrow(/src \(readback\) has no mapped range/);
      await expect(copy(upload, readback, mapped! + 8)).rejects.toThrow(UsageError);
      destroy();
    }
  });

  it.each(entries)('%s refuses a buffer that is not mapped', async (_, copy) => {
    const { readback, upload, destroy } = await mappedPair(4096);
    readback.unmap();
    await expect(copy(upload, readback, 64)).rejects.toThrow(/src \(readback\) is unmapped, not mapped/);
    destroy();
  });
});

/**
 * The calls above, in a child `node` against a bundle of src/ and the built addon: a write past a
 * mapped range used to end the process with a segmentation fault. It must exit 0, every call refused.
 */
describe.runIf(hasWebGPU && (addonBuilt || addonRequired))('a process making out-of-bounds host copies', () => {
  const outDir = `${packageDir}node_modules/.cache/host-copy-bounds-test`;
  beforeAll(async () => {
    await bundleRuntime('host-copy-bounds-test');
  }, 60_000);

  it('lives on, each call refused with a typed error', () => {
    const script = fileURLToPath(new URL('fixtures/out-of-bounds-script.mjs', import.meta.url));
    const child = spawnSync(process.execPath, [script, pathToFileURL(`${outDir}/index.js`).href, addonPath], {
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, SYNCOPATE_HOST_COPY_ADDON: addonPath },
    });
    expect(child.signal, child.stderr).toBeNull();
    expect(child.status, child.stderr).toBe(0);
    const refused = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as { call: string; error: string }[];
    expect(refused.map((r) => r.call)).toEqual(['copier.copyMapped(4 KiB, 4 KiB, 8192)', 'copyMapped(4 KiB mapped of 8, 8192)', 'addon.copySync(anchor, anchor, 0, 8192)', 'addon.copy(anchor, anchor, 0, 8192)', 'addon.copy(4 KiB, 4 KiB, 0, 2^32 + 1 slices)']);
    for (const r of refused) expect(r.error, r.call).toMatch(/^(UsageError|RangeError|TypeError)$/);
  }, 60_000);
});
