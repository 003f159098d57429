import { getHeapStatistics } from 'node:v8';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GpuTimeoutError, hostCopier, jsHostCopy, openDevices, PeerCopier, PeerCopyError, UsageError, type HostCopier, type PlacedDeviceHandle, type TransferStages } from '../src/index.js';
import { slowThenFailingCopy } from './fixtures/slow-then-failing-copy.js';
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

  it('reports the host times of a transfer\'s stages, in order, once it has settled', async () => {
    const [a, b] = devices as [PlacedDeviceHandle, PlacedDeviceHandle];
    const source = bufferWith(a.device, Uint32Array.from({ length: 256 }, (_, i) => i));
    const target = bufferWith(b.device, new Uint32Array(256));
    const copier = new PeerCopier();
    const seen: TransferStages[] = [];
    const before = performance.now();
    await copier.copyRuns({ device: a, buffer: source }, { device: b, buffer: target }, [{ offset: 0, bytes: 512 }, { offset: 768, bytes: 256 }], 'done', (s) => seen.push(s));
    const after = performance.now();
    expect(seen).toHaveLength(1);
    const done = seen[0]!;
    expect([before, done.startMs, done.sourceMappedMs, done.submittedMs, done.doneMs!, after]).toEqual(
      [before, done.startMs, done.sourceMappedMs, done.submittedMs, done.doneMs!, after].sort((x, y) => x - y),
    );
    // Each piece's steps: its read-back and its upload staging mapped after it started, its host copy
    // after both, its upload submitted after that, all within the transfer.
    const inPieces = new PeerCopier({ minPieceBytes: 256, maxPieceBytes: 256 });
    await inPieces.copyRuns({ device: a, buffer: source }, { device: b, buffer: target }, [{ offset: 0, bytes: 512 }, { offset: 768, bytes: 256 }], 'done', (s) => seen.push(s));
    inPieces.destroy();
    const pieced = seen.pop()!;
    expect(pieced.pieces).toHaveLength(3);
    for (const p of pieced.pieces) {
      expect(p.readMappedMs).toBeGreaterThanOrEqual(p.startMs);
      expect(p.stagingReadyMs).toBeGreaterThanOrEqual(p.startMs);
      expect(p.copiedMs).toBeGreaterThanOrEqual(Math.max(p.readMappedMs, p.stagingReadyMs));
      expect([pieced.startMs, p.startMs, p.copiedMs, p.submittedMs, pieced.submittedMs]).toEqual([pieced.startMs, p.startMs, p.copiedMs, p.submittedMs, pieced.submittedMs].sort((x, y) => x - y));
    }
    expect(pieced.sourceMappedMs).toBe(pieced.pieces[0]!.readMappedMs);
    // Settled once submitted: no time for the destination's queue to finish.
    await copier.copyRuns({ device: a, buffer: source }, { device: b, buffer: target }, [{ offset: 0, bytes: 4 }], 'submitted', (s) => seen.push(s));
    expect(seen[1]!.doneMs).toBeUndefined();
    expect(seen[1]!.submittedMs).toBeGreaterThanOrEqual(seen[1]!.sourceMappedMs);
    const got = await read(b.device, target);
    expect(Array.from(got.subarray(0, 128))).toEqual(Array.from({ length: 128 }, (_, i) => i));
    expect(Array.from(got.subarray(192, 256))).toEqual(Array.from({ length: 64 }, (_, i) => 192 + i));
    expect(got[150]).toBe(0);
    copier.destroy();
    source.destroy();
    target.destroy();
  });

  it('streams a transfer of several pieces through the ring, runs crossing piece boundaries', async () => {
    const [a, b] = devices as [PlacedDeviceHandle, PlacedDeviceHandle];
    const n = 4096;
    const data = Uint32Array.from({ length: n }, () => (Math.random() * 2 ** 32) >>> 0);
    const source = bufferWith(a.device, data);
    const target = bufferWith(b.device, new Uint32Array(n));
    // 1 KiB pieces, two in flight: the three runs below make 7 pieces, some holding parts of two runs.
    const copier = new PeerCopier({ ring: 2, minPieceBytes: 1024, maxPieceBytes: 1024 });
    const runs = [
      { offset: 0, bytes: 1500 },
      { offset: 4000, bytes: 3000 },
      { offset: 12000, bytes: 2500 },
    ];
    await copier.copyRuns({ device: a, buffer: source }, { device: b, buffer: target }, runs);
    const got = await read(b.device, target);
    const want = new Uint32Array(n);
    for (const r of runs) want.set(data.subarray(r.offset / 4, (r.offset + r.bytes) / 4), r.offset / 4);
    expect(got).toEqual(want);
    // Two lanes, each one read-back and one upload buffer of 1 KiB.
    expect(copier.stagingBuffers).toBe(4);
    copier.destroy();
    source.destroy();
    target.destroy();
  });

  it.each([['js', jsHostCopy], ['this process', hostCopier().copier]] as const)('moves 1 MiB pieces with the %s host copy (the native one in slices)', async (_, hostCopy) => {
    const [a, b] = devices as [PlacedDeviceHandle, PlacedDeviceHandle];
    const n = (3 << 20) / 4 + 5;
    const data = Uint32Array.from({ length: n }, () => (Math.random() * 2 ** 32) >>> 0);
    const source = bufferWith(a.device, data);
    const target = bufferWith(b.device, new Uint32Array(n));
    const copier = new PeerCopier({ ring: 2, minPieceBytes: 1 << 20, maxPieceBytes: 1 << 20, hostCopy });
    expect(copier.hostCopy).toBe(hostCopy);
    await copier.copyRuns({ device: a, buffer: source }, { device: b, buffer: target }, [{ offset: 0, bytes: n * 4 }]);
    const got = await read(b.device, target);
    let wrong = 0;
    for (let i = 0; i < n; i++) if (got[i] !== data[i]) wrong++;
    expect(wrong).toBe(0);
    copier.destroy();
    source.destroy();
    target.destroy();
  });

  it.runIf(hostCopier().copier.kind === 'native')('holds no mapped range of a large piece as a JS ArrayBuffer while it copies', async () => {
    // A mapped range handed to JS counts as V8 external memory while it is held, and with 64 MiB or more
    // held at once (two transfers' lanes) V8 ran major collections mid-run on two H200s; the native
    // copier copies through 8-byte anchors instead. The external memory is sampled as each copy starts.
    const [a, b] = devices as [PlacedDeviceHandle, PlacedDeviceHandle];
    const native = hostCopier().copier;
    const n = (4 << 20) / 4;
    const data = Uint32Array.from({ length: n }, (_, i) => i * 7);
    const source = bufferWith(a.device, data);
    const target = bufferWith(b.device, new Uint32Array(n));
    const external = () => getHeapStatistics().external_memory;
    const base = external(); // after the test's own arrays, which count too
    let peak = 0;
    const sampled = <T>(result: T): T => ((peak = Math.max(peak, external() - base)), result);
    const hostCopy: HostCopier = { kind: native.kind, copy: (d, s) => sampled(native.copy(d, s)), copyMapped: (d, s, bytes) => sampled(native.copyMapped!(d, s, bytes)) };
    const copier = new PeerCopier({ ring: 4, minPieceBytes: 1 << 20, maxPieceBytes: 1 << 20, hostCopy });
    await copier.copyRuns({ device: a, buffer: source }, { device: b, buffer: target }, [{ offset: 0, bytes: n * 4 }]);
    expect(await read(b.device, target)).toEqual(data);
    // Whole ranges: 2 MiB a piece (read-back and upload), up to 8 MiB with four pieces copying at once.
    expect(peak).toBeLessThan(1 << 20);
    copier.destroy();
    source.destroy();
    target.destroy();
  });

  it.each([2, 4])('passes a failed piece on only once the host copies of the other pieces have settled (read-ahead %i)', async (readAhead) => {
    const [a, b] = devices as [PlacedDeviceHandle, PlacedDeviceHandle];
    const n = 4096;
    const source = bufferWith(a.device, new Uint32Array(n));
    const target = bufferWith(b.device, new Uint32Array(n));
    // The first piece's copy takes 100 ms (as on another thread); the second fails at once.
    const { hostCopy, inFlight } = slowThenFailingCopy(100);
    const copier = new PeerCopier({ ring: 2, readAhead, minPieceBytes: 4096, maxPieceBytes: 4096, hostCopy });
    const copying = copier.copyRuns({ device: a, buffer: source }, { device: b, buffer: target }, [{ offset: 0, bytes: n * 4 }]);
    await expect(copying).rejects.toThrow(PeerCopyError);
    expect(inFlight()).toBe(0);
    // Read-backs submitted ahead that no lane reached were unmapped and pooled, not left mapped.
    await copier.copyRuns({ device: a, buffer: source }, { device: b, buffer: target }, [{ offset: 0, bytes: 4096 }], 'done');
    copier.destroy();
    source.destroy();
    target.destroy();
  });

  it('reads pieces back `readAhead` ahead of the host copies, so none waits for work submitted after the transfer starts', async () => {
    const [a, b] = devices as [PlacedDeviceHandle, PlacedDeviceHandle];
    const n = 6 * 256;
    const data = Uint32Array.from({ length: n }, () => (Math.random() * 2 ** 32) >>> 0);
    const source = bufferWith(a.device, data);
    // Each host copy takes 20 ms, so the order of the steps does not depend on the GPU's speed.
    const slowCopy = { kind: 'js' as const, copy: (dst: Uint8Array, src: Uint8Array) => new Promise<void>((resolve) => setTimeout(() => (dst.set(src), resolve()), 20)) };
    const copier = new PeerCopier({ ring: 2, minPieceBytes: 1024, maxPieceBytes: 1024, besideCompute: { ring: 2, readAhead: 6 }, hostCopy: slowCopy });
    const startsBeforeFirstCopy = async (flow: 'alone' | 'beside-compute') => {
      const target = bufferWith(b.device, new Uint32Array(n));
      let stages: TransferStages | undefined;
      await copier.copyRuns({ device: a, buffer: source }, { device: b, buffer: target }, [{ offset: 0, bytes: n * 4 }], 'done', (s) => (stages = s), undefined, flow);
      expect(await read(b.device, target)).toEqual(data);
      target.destroy();
      return stages!.pieces.filter((p) => p.startMs <= stages!.pieces[0]!.copiedMs).length;
    };
    // Six 1 KiB pieces: beside compute all six are read back before the first host copy is over;
    // alone, the ring's two.
    expect(await startsBeforeFirstCopy('beside-compute')).toBe(6);
    expect(await startsBeforeFirstCopy('alone')).toBe(2);
    copier.destroy();
    source.destroy();
  });

  it('moves every piece when later host copies finish before earlier ones', async () => {
    const [a, b] = devices as [PlacedDeviceHandle, PlacedDeviceHandle];
    const n = 8 * 256;
    const data = Uint32Array.from({ length: n }, () => (Math.random() * 2 ** 32) >>> 0);
    const source = bufferWith(a.device, data);
    const target = bufferWith(b.device, new Uint32Array(n));
    // The first copy of each pair is the slow one: the lane with the second piece comes back first.
    let calls = 0;
    const unevenCopy = { kind: 'js' as const, copy: (dst: Uint8Array, src: Uint8Array) => new Promise<void>((resolve) => setTimeout(() => (dst.set(src), resolve()), calls++ % 2 === 0 ? 30 : 1)) };
    const copier = new PeerCopier({ ring: 2, readAhead: 2, minPieceBytes: 1024, maxPieceBytes: 1024, hostCopy: unevenCopy });
    await copier.copyRuns({ device: a, buffer: source }, { device: b, buffer: target }, [{ offset: 0, bytes: n * 4 }]);
    expect(await read(b.device, target)).toEqual(data);
    copier.destroy();
    source.destroy();
    target.destroy();
  });

  it('rejects a read-ahead shorter than the ring, alone or beside compute', () => {
    expect(() => new PeerCopier({ ring: 4, readAhead: 2 })).toThrow(UsageError);
    expect(() => new PeerCopier({ besideCompute: { ring: 4, readAhead: 3 } })).toThrow(/beside-compute/);
  });

  it('moves a transfer of 1 MiB or less as one piece by default', async () => {
    const [a, b] = devices as [PlacedDeviceHandle, PlacedDeviceHandle];
    const n = (1 << 20) / 4;
    const data = Uint32Array.from({ length: n }, (_, i) => i ^ 0x5a5a);
    const source = bufferWith(a.device, data);
    const target = bufferWith(b.device, new Uint32Array(n));
    const copier = new PeerCopier();
    await copier.copyRuns({ device: a, buffer: source }, { device: b, buffer: target }, [{ offset: 0, bytes: n * 4 }]);
    await copier.copyRuns({ device: a, buffer: source }, { device: b, buffer: target }, [{ offset: 4096, bytes: 8192 }]);
    expect(await read(b.device, target)).toEqual(data);
    // One read-back and one upload buffer of 1 MiB served both: each transfer was one piece.
    expect(copier.stagingBuffers).toBe(2);
    copier.destroy();
    source.destroy();
    target.destroy();
  });

  it('keeps its staging pool flat over 1000 transfers', async () => {
    const [a, b] = devices as [PlacedDeviceHandle, PlacedDeviceHandle];
    const source = bufferWith(a.device, Uint32Array.from({ length: 2048 }, (_, i) => i));
    const target = bufferWith(b.device, new Uint32Array(2048));
    const copier = new PeerCopier({ ring: 3, minPieceBytes: 1024, maxPieceBytes: 1024 });
    const once = (i: number) =>
      copier.copyRuns({ device: a, buffer: source }, { device: b, buffer: target }, [{ offset: 0, bytes: 8192 }], i % 2 === 0 ? 'done' : 'submitted');
    await once(0);
    const warm = copier.stagingBuffers;
    for (let i = 1; i < 1000; i++) await once(i);
    expect(copier.stagingBuffers).toBe(warm);
    expect(warm).toBe(6);
    const got = await read(b.device, target);
    expect(got[2047]).toBe(2047);
    copier.destroy();
    source.destroy();
    target.destroy();
  });

  it('ends a transfer whose source device is lost in a PeerCopyError naming the transfer, the devices and the piece', async () => {
    const [lost, kept] = (await openDevices(2, { gpus: [] })) as [PlacedDeviceHandle, PlacedDeviceHandle];
    const source = bufferWith(lost.device, new Uint32Array(1024));
    const target = bufferWith(kept.device, new Uint32Array(1024));
    const copier = new PeerCopier({ timeoutMs: 5_000 });
    lost.device.destroy();
    const copying = copier.copyRuns({ device: lost, buffer: source }, { device: kept, buffer: target }, [{ offset: 0, bytes: 4096 }], 'done', undefined, 'chunk 3 (rank 0 -> rank 1)');
    const error = await copying.then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(PeerCopyError);
    const e = error as PeerCopyError;
    expect(e.message).toContain('chunk 3 (rank 0 -> rank 1)');
    expect(e.fromDevice).toContain('device 0');
    expect(e.toDevice).toContain('device 1');
    expect([e.piece, e.pieces]).toEqual([0, 1]);
    copier.destroy();
    kept.close();
    lost.close();
  });

  it('ends a transfer whose source does not finish in time in a PeerCopyError with the timeout as its cause', async () => {
    const [a, b] = devices as [PlacedDeviceHandle, PlacedDeviceHandle];
    const source = bufferWith(a.device, new Uint32Array(1024));
    const target = bufferWith(b.device, new Uint32Array(1024));
    // A bounded busy kernel on the source: the copy out queues behind it, so reading the source waits.
    const module = a.device.createShaderModule({
      code: `@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(local_invocation_index) i: u32) {
  var s = i;
  for (var k = 0u; k < 4000000u; k++) { s = s * 1664525u + k; }
  out[i] = s;
}`,
    });
    const pipeline = a.device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
    const busy = a.device.createBuffer({ size: 256, usage: GPUBufferUsage.STORAGE });
    const encoder = a.device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, a.device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: busy } }] }));
    pass.dispatchWorkgroups(1);
    pass.end();
    // Four million steps an invocation: seconds on lavapipe, far past the copier's 20 ms.
    a.device.queue.submit([encoder.finish()]);
    const copier = new PeerCopier({ timeoutMs: 20 });
    const error = await copier
      .copyRuns({ device: a, buffer: source }, { device: b, buffer: target }, [{ offset: 0, bytes: 4096 }], 'done', undefined, 'chunk 5 (rank 1 -> rank 0)')
      .then(() => undefined, (e: unknown) => e);
    await a.device.queue.onSubmittedWorkDone();
    expect(error).toBeInstanceOf(PeerCopyError);
    expect((error as PeerCopyError).cause).toBeInstanceOf(GpuTimeoutError);
    expect((error as PeerCopyError).message).toMatch(/chunk 5 \(rank 1 -> rank 0\) from device 0 .* to device 1 .* piece 1 of 1: timed out after 20 ms waiting for peer copy: reading the source/);
    copier.destroy();
    for (const x of [source, target, busy]) x.destroy();
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
