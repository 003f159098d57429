import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDevices, PeerCopier, UsageError, type PlacedDeviceHandle } from '../src/index.js';
import { hasWebGPU } from './webgpu.js';

describe.skipIf(!hasWebGPU)('PeerCopier', () => {
  let devices: PlacedDeviceHandle[];
  beforeAll(async () => {
    devices = await openDevices(2, { gpus: [] });
  });
  afterAll(() => devices?.forEach((d) => d.close()));

  const usage = () => GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;

  function bufferWith(device: GPUDevice, data: Uint32Array): GPUBuffer {
    const buffer = device.createBuffer({ size: data.byteLength, usage: usage() });
    device.queue.writeBuffer(buffer, 0, data);
    return buffer;
  }

  async function read(device: GPUDevice, buffer: GPUBuffer): Promise<Uint32Array> {
    const staging = device.createBuffer({ size: buffer.size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const encoder = device.createCommandEncoder();
    encoder.copyBufferToBuffer(buffer, 0, staging, 0, buffer.size);
    device.queue.submit([encoder.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    const out = new Uint32Array(staging.getMappedRange().slice(0));
    staging.destroy();
    return out;
  }

  it('moves ranges from one device to another through the host, reusing its staging buffers', async () => {
    const [a, b] = devices as [PlacedDeviceHandle, PlacedDeviceHandle];
    const n = 1 << 16;
    const source = bufferWith(a.device, Uint32Array.from({ length: n }, (_, i) => i * 3 + 1));
    const target = bufferWith(b.device, new Uint32Array(n));
    const copier = new PeerCopier({ inFlight: 2 });
    // The first half, as four slices of 8K words two at a time, lands in the second half of the target.
    const slice = n / 8;
    const copies = Array.from({ length: 4 }, (_, i) => ({
      from: { device: a, buffer: source, offset: i * slice * 4 },
      to: { device: b, buffer: target, offset: (i + 4) * slice * 4 },
      bytes: slice * 4,
    }));
    await copier.copyAll(copies);
    await copier.copyAll(copies);
    const got = await read(b.device, target);
    for (let i = 0; i < n; i++) {
      const want = i >= n / 2 ? (i - n / 2) * 3 + 1 : 0;
      if (got[i] !== want) throw new Error(`word ${i}: ${got[i]} != ${want}`);
    }
    // Two lanes, one read and one write staging buffer each: repeating the transfers allocates nothing.
    expect(copier.stagingBuffers).toBe(4);
    copier.destroy();
    source.destroy();
    target.destroy();
  });

  it('refuses sizes and offsets that are not multiples of 4', async () => {
    const [a, b] = devices as [PlacedDeviceHandle, PlacedDeviceHandle];
    const buffer = bufferWith(a.device, new Uint32Array(4));
    const other = bufferWith(b.device, new Uint32Array(4));
    const copier = new PeerCopier();
    await expect(copier.copy({ from: { device: a, buffer, offset: 0 }, to: { device: b, buffer: other, offset: 0 }, bytes: 6 })).rejects.toThrow(UsageError);
    copier.destroy();
  });
});
