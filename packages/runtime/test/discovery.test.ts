import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Executor, listPciGpus, openDevices, placeRanks, type PlacedDeviceHandle } from '../src/index.js';
import { hasWebGPU, prepareAdd } from './webgpu.js';

describe('listPciGpus', () => {
  const root = mkdtempSync(join(tmpdir(), 'syncopate-sysfs-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  function pciDevice(address: string, files: Record<string, string>) {
    mkdirSync(join(root, address), { recursive: true });
    for (const [name, text] of Object.entries(files)) writeFileSync(join(root, address, name), text + '\n');
  }
  // Written out of address order: the result is sorted.
  pciDevice('0000:00:07.0', { class: '0x030200', vendor: '0x10de', device: '0x2330' }); // 3D controller
  pciDevice('0000:00:02.0', { class: '0x030000', vendor: '0x1234', device: '0x1111' }); // VGA
  pciDevice('0000:00:03.0', { class: '0x020000', vendor: '0x1af4', device: '0x1041' }); // network
  pciDevice('0000:00:04.0', { vendor: '0x10de', device: '0x2330' }); // no class file
  pciDevice('0000:00:05.0', { class: '0x060000', vendor: '0x8086', device: '0x0d57' }); // host bridge
  pciDevice('0000:41:00.0', { class: '0x030000' }); // VGA without vendor/device files

  it('lists VGA and 3D controllers, sorted, with their DRI_PRIME values', () => {
    expect(listPciGpus(root)).toEqual([
      { address: '0000:00:02.0', driPrime: 'pci-0000_00_02_0', vendor: '0x1234', device: '0x1111', class: '0x030000' },
      { address: '0000:00:07.0', driPrime: 'pci-0000_00_07_0', vendor: '0x10de', device: '0x2330', class: '0x030200' },
      { address: '0000:41:00.0', driPrime: 'pci-0000_41_00_0', vendor: '', device: '', class: '0x030000' },
    ]);
  });

  it('gives [] for a missing root or one without display devices', () => {
    expect(listPciGpus(join(root, 'no-such-dir'))).toEqual([]);
    const empty = mkdtempSync(join(root, 'empty-'));
    expect(listPciGpus(empty)).toEqual([]);
  });

  it('reads the real sysfs without throwing', () => {
    for (const gpu of listPciGpus()) expect(gpu.class.startsWith('0x03')).toBe(true);
  });
});

describe('placeRanks', () => {
  it('places blocked ranks', () => {
    expect(placeRanks(4, 2)).toEqual([0, 0, 1, 1]);
    expect(placeRanks(4, 4)).toEqual([0, 1, 2, 3]);
    expect(placeRanks(4, 1)).toEqual([0, 0, 0, 0]);
    expect(placeRanks(5, 2)).toEqual([0, 0, 0, 1, 1]);
    expect(placeRanks(2, 4)).toEqual([0, 1]);
    expect(placeRanks(6, 3, 2)).toEqual([0, 0, 1, 1, 2, 2]);
    expect(placeRanks(3, 3, 4)).toEqual([0, 0, 0]);
  });

  it('refuses what does not fit and bad arguments', () => {
    expect(() => placeRanks(8, 2, 3)).toThrow(RangeError);
    expect(() => placeRanks(8, 2, 3)).toThrow('8 ranks do not fit on 2 devices at 3 ranks per device (6 slots)');
    expect(() => placeRanks(0, 2)).toThrow('ranks must be an integer >= 1, got 0');
    expect(() => placeRanks(2, 0)).toThrow('devices must be an integer >= 1, got 0');
    expect(() => placeRanks(2, 1.5)).toThrow(RangeError);
    expect(() => placeRanks(4, 2, 0)).toThrow('ranksPerDevice must be an integer >= 1, got 0');
  });
});

describe('openDevices', () => {
  it('refuses a count below 1', async () => {
    await expect(openDevices(0)).rejects.toThrow(RangeError);
    await expect(openDevices(-1)).rejects.toThrow('count must be an integer >= 1, got -1');
    await expect(openDevices(1.5)).rejects.toThrow(RangeError);
  });

  it.skipIf(!hasWebGPU)('opens 3 distinct working devices on the software adapter', async () => {
    // gpus: [] forces the software adapter even on a machine with PCI GPUs.
    const handles: PlacedDeviceHandle[] = await openDevices(3, { gpus: [] });
    try {
      expect(handles).toHaveLength(3);
      expect(new Set(handles.map((h) => h.device)).size).toBe(3);
      expect(handles.map((h) => h.index)).toEqual([0, 1, 2]);
      for (const h of handles) {
        expect(h.placement.kind).toBe('software');
        expect(h.placement.description).toMatch(/^software/);
      }
      const n = 100;
      const results = await Promise.all(handles.map((h, i) => addOn(h, n, i)));
      for (const [i, c] of results.entries()) {
        expect(Array.from(c)).toEqual(Array.from({ length: n }, (_, j) => j + 10 * i));
      }
    } finally {
      for (const h of handles) h.close();
    }
  });

  it.skipIf(!hasWebGPU)('restores DRI_PRIME after placing devices on PCI GPUs', async () => {
    // A GPU address no machine has: Mesa's device-select falls back to its default adapter.
    const gpus = listPciGpusFake();
    const before = process.env['DRI_PRIME'];
    process.env['DRI_PRIME'] = 'caller-value';
    try {
      const handles = await openDevices(3, { gpus });
      try {
        expect(process.env['DRI_PRIME']).toBe('caller-value');
        expect(handles.map((h) => h.placement.kind === 'pci' && h.placement.gpuIndex)).toEqual([0, 1, 0]);
        expect(handles[1]!.placement.description).toBe('GPU 1 (0000:ff:1f.7, 0x10de:0x2330)');
      } finally {
        for (const h of handles) h.close();
      }
    } finally {
      if (before === undefined) delete process.env['DRI_PRIME'];
      else process.env['DRI_PRIME'] = before;
    }
  });
});

describe.skipIf(!hasWebGPU)('openDevices gpuOffset', () => {
  it("puts device i on GPU (offset + i) mod n: a process's own block of the host's GPUs, named by their index there", async () => {
    const handles = await openDevices(2, { gpus: listPciGpusFake(), gpuOffset: 1 });
    try {
      expect(handles.map((h) => h.placement.kind === 'pci' && h.placement.gpuIndex)).toEqual([1, 0]);
      expect(handles[0]!.placement.description).toBe('GPU 1 (0000:ff:1f.7, 0x10de:0x2330)');
    } finally {
      for (const h of handles) h.close();
    }
  });
});

function listPciGpusFake() {
  return ['0000:ff:1f.6', '0000:ff:1f.7'].map((address) => ({
    address,
    driPrime: 'pci-' + address.replace(/[:.]/g, '_'),
    vendor: '0x10de',
    device: '0x2330',
    class: '0x030200',
  }));
}

/** c = a + b on one device, with b = 10 * which, so each device's answer differs. */
async function addOn(handle: PlacedDeviceHandle, n: number, which: number): Promise<Float32Array> {
  const executor = Executor.create(handle);
  try {
    const kernel = await prepareAdd(executor, Float32Array.from({ length: n }, (_, j) => j), new Float32Array(n).fill(10 * which));
    await executor.run([{ kernel }], { timing: false });
    return new Float32Array(await executor.read('c'));
  } finally {
    executor.destroy();
  }
}
