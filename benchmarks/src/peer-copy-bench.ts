/**
 * Peer-copy between two WebGPU devices, and where its time goes. In one run:
 *   probes  the pieces of a host round trip in Dawn's Node binding, each alone: an idle mapAsync, a
 *           4-byte copy then mapAsync, onSubmittedWorkDone after an empty submit (each plain, with a
 *           setImmediate loop beside it, and with onSubmittedWorkDone polled beside it); the host copy
 *           between two mapped ranges; read-back (copy + mapAsync READ) and upload (mapped MAP_WRITE +
 *           copy, against queue.writeBuffer) at 4 and 64 MiB
 *   copy    PeerCopier at 1, 4, 16, 64 and 256 MiB, one transfer at a time, end to end (until the
 *           bytes are on the destination), checked against the random source bytes
 *   sweep   the ring's depth and piece size at 1 and 64 MiB
 *   peer    benchmarks/peers/host_copy.py on the same GPU(s) (PyTorch through pinned host memory,
 *           serial and pipelined), and our GB/s as a ratio of each
 * Prints JSON lines and writes peer-copy.json into --out (or $OUT).
 *
 *   node dist/peercopy.mjs [--quick] [--out DIR] [--src 0 --dst 1] [--no-peer] [--probes-only]
 *
 * --probes-only runs the probes alone (seconds): e.g. once per NUMA node under numactl, to see whether
 * the host copy out of mapped read-back memory depends on where the process runs.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { hostCopier, jsHostCopy, openDevices, PeerCopier, type PlacedDeviceHandle } from '@syncopate/runtime';
import { timeEach } from './stats.js';

const MiB = 1 << 20;
const storage = () => GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;

/** Runs `fn` while something else polls beside it: nothing, a setImmediate loop, or onSubmittedWorkDone in a loop. */
async function withPolling<T>(device: GPUDevice, how: 'none' | 'setImmediate' | 'workDone', fn: () => Promise<T>): Promise<T> {
  let on = how !== 'none';
  const loop = (async () => {
    while (on) {
      if (how === 'setImmediate') await new Promise((r) => setImmediate(r));
      else await device.queue.onSubmittedWorkDone();
    }
  })();
  try {
    return await fn();
  } finally {
    on = false;
    await loop;
  }
}

async function probes(devices: readonly PlacedDeviceHandle[], runs: number) {
  const [a, b] = devices as [PlacedDeviceHandle, PlacedDeviceHandle];
  const d = a.device;
  const out: Record<string, unknown>[] = [];
  const src4 = d.createBuffer({ size: 4, usage: storage() });
  const read4 = d.createBuffer({ size: 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  for (const polling of ['none', 'setImmediate', 'workDone'] as const) {
    const idleMap = await withPolling(d, polling, () =>
      timeEach(runs, 5, async () => {
        await read4.mapAsync(GPUMapMode.READ);
        read4.unmap();
      }),
    );
    const copyMap = await withPolling(d, polling, () =>
      timeEach(runs, 5, async () => {
        const e = d.createCommandEncoder();
        e.copyBufferToBuffer(src4, 0, read4, 0, 4);
        d.queue.submit([e.finish()]);
        await read4.mapAsync(GPUMapMode.READ);
        read4.unmap();
      }),
    );
    const workDone = await withPolling(d, polling, () =>
      timeEach(runs, 5, async () => {
        d.queue.submit([]);
        await d.queue.onSubmittedWorkDone();
      }),
    );
    out.push({ kind: 'probe-latency', polling, idleMapMs: idleMap, copyThenMapMs: copyMap, submitWorkDoneMs: workDone });
  }
  src4.destroy();
  read4.destroy();

  for (const mib of [4, 64]) {
    const bytes = mib * MiB;
    const gpu = d.createBuffer({ size: bytes, usage: storage() });
    const read = d.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const write = b.device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC });
    const gpuB = b.device.createBuffer({ size: bytes, usage: storage() });
    // Read-back: GPU buffer -> MAP_READ staging, mapped.
    const readBack = await timeEach(runs, 3, async () => {
      const e = d.createCommandEncoder();
      e.copyBufferToBuffer(gpu, 0, read, 0, bytes);
      d.queue.submit([e.finish()]);
      await read.mapAsync(GPUMapMode.READ);
      read.unmap();
    });
    // The host copy between two mapped ranges (what the copier does between read-back and upload).
    await read.mapAsync(GPUMapMode.READ);
    await write.mapAsync(GPUMapMode.WRITE);
    const from = new Uint8Array(read.getMappedRange());
    const to = new Uint8Array(write.getMappedRange());
    const hostCopy = await timeEach(runs, 2, async () => to.set(from));
    // The same copy off the JS thread (the addon, in slices on libuv's pool), each thread count and
    // way of storing checked.
    const native: Record<string, unknown>[] = [];
    for (const threads of hostCopier().copier.kind === 'native' ? [1, 2, 4, 8, 16] : []) {
      for (const stores of ['cached', 'streaming'] as const) {
        const { copier } = hostCopier({ threads, stores });
        to.fill(0);
        await copier.copy(to, from);
        const verified = to.every((v, i) => v === from[i]);
        const ms = await timeEach(runs, 2, () => copier.copy(to, from));
        native.push({ threads, stores, verified, gbps: bytes / (ms.median * 1e-3) / 1e9, ms });
      }
    }
    const plainA = new Uint8Array(bytes);
    const plainB = new Uint8Array(bytes);
    const heapCopy = await timeEach(runs, 2, async () => plainB.set(plainA));
    const mappedToHeap = await timeEach(runs, 2, async () => plainB.set(from));
    const heapToMapped = await timeEach(runs, 2, async () => to.set(plainA));
    read.unmap();
    write.unmap();
    // Upload: mapped MAP_WRITE staging (map, fill, unmap, copy, done) against queue.writeBuffer.
    const mappedUpload = await timeEach(runs, 3, async () => {
      await write.mapAsync(GPUMapMode.WRITE);
      new Uint8Array(write.getMappedRange()).set(plainA);
      write.unmap();
      const e = b.device.createCommandEncoder();
      e.copyBufferToBuffer(write, 0, gpuB, 0, bytes);
      b.device.queue.submit([e.finish()]);
      await b.device.queue.onSubmittedWorkDone();
    });
    const writeBuffer = await timeEach(runs, 3, async () => {
      b.device.queue.writeBuffer(gpuB, 0, plainA);
      await b.device.queue.onSubmittedWorkDone();
    });
    const gbps = (s: { median: number }) => bytes / (s.median * 1e-3) / 1e9;
    out.push({
      kind: 'probe-bandwidth', mib,
      readBackGBps: gbps(readBack), mappedToMappedGBps: gbps(hostCopy), heapToHeapGBps: gbps(heapCopy),
      mappedToHeapGBps: gbps(mappedToHeap), heapToMappedGBps: gbps(heapToMapped),
      mappedUploadGBps: gbps(mappedUpload), writeBufferGBps: gbps(writeBuffer), nativeMappedToMapped: native,
      ms: { readBack, hostCopy, heapCopy, mappedToHeap, heapToMapped, mappedUpload, writeBuffer },
    });
    for (const x of [gpu, read, write, gpuB]) x.destroy();
  }
  return out;
}

async function readAll(device: GPUDevice, buffer: GPUBuffer): Promise<Uint32Array> {
  const staging = device.createBuffer({ size: buffer.size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const e = device.createCommandEncoder();
  e.copyBufferToBuffer(buffer, 0, staging, 0, buffer.size);
  device.queue.submit([e.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const out = new Uint32Array(staging.getMappedRange().slice(0));
  staging.destroy();
  return out;
}

/** One transfer of `mib` at a time, until its bytes are on the destination; the bytes checked first. */
async function peerCopy(devices: readonly PlacedDeviceHandle[], copier: PeerCopier, mib: number, runs: number) {
  const [a, b] = devices as [PlacedDeviceHandle, PlacedDeviceHandle];
  const bytes = mib * MiB;
  const src = a.device.createBuffer({ size: bytes, usage: storage() });
  const dst = b.device.createBuffer({ size: bytes, usage: storage() });
  const want = new Uint32Array(bytes / 4);
  for (let i = 0; i < want.length; i++) want[i] = (Math.random() * 2 ** 32) >>> 0;
  a.device.queue.writeBuffer(src, 0, want);
  const once = () => copier.copyRuns({ device: a, buffer: src }, { device: b, buffer: dst }, [{ offset: 0, bytes }], 'done');
  try {
    await once();
    const got = await readAll(b.device, dst);
    let wrong = 0;
    for (let i = 0; i < want.length; i++) if (got[i] !== want[i]) wrong++;
    const ms = await timeEach(runs, 3, once);
    return { kind: 'peer-copy', mib, bytes, verified: wrong === 0, wrongWords: wrong, ms, gbps: bytes / (ms.median * 1e-3) / 1e9, stagingBuffers: copier.stagingBuffers };
  } finally {
    src.destroy();
    dst.destroy();
  }
}

/** host_copy.py's JSON lines (pinned serial and pipelined), or why there are none. */
function hostCopyPeer(src: number, dst: number, maxMib: number): Record<string, unknown>[] {
  const r = spawnSync('python3', ['benchmarks/peers/host_copy.py', '--src', String(src), '--dst', String(dst), '--min-mib', '1', '--max-mib', String(maxMib), '--methods', 'pinned-serial', 'pinned-pipelined'], { encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) return [{ kind: 'peer-error', status: r.status, stderr: (r.stderr ?? String(r.error)).slice(-2000) }];
  return r.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { quick: { type: 'boolean' }, out: { type: 'string' }, src: { type: 'string' }, dst: { type: 'string' }, 'no-peer': { type: 'boolean' }, 'no-probes': { type: 'boolean' }, 'probes-only': { type: 'boolean' } } });
  const out = values.out ?? process.env.OUT ?? '.';
  const quick = values.quick ?? false;
  const runs = quick ? 5 : 20;
  const sizes = quick ? [1, 4, 16] : [1, 4, 16, 64, 256];
  const devices = await openDevices(2, { device: { requiredLimits: 'adapter-max' } });
  const results: Record<string, unknown>[] = [];
  const report = (r: Record<string, unknown>) => {
    results.push(r);
    console.log(JSON.stringify(r));
  };
  try {
    report({ kind: 'devices', placements: devices.map((d) => d.placement.description), adapter: devices[0]!.adapterInfo });
    if (!values['no-probes']) for (const p of await probes(devices, runs)) report(p);
    if (values['probes-only']) return;
    const loaded = hostCopier();
    report({ kind: 'host-copy', copier: loaded.copier.kind, why: loaded.why ?? null, uvThreadpoolSize: process.env.UV_THREADPOOL_SIZE ?? null });
    // Each host copier in turn (the JS thread's, then the addon's where it loaded), then a sweep of each.
    const copiers = loaded.copier.kind === 'native' ? [jsHostCopy, loaded.copier] : [jsHostCopy];
    const ours: Record<string, unknown>[] = [];
    for (const hostCopy of copiers) {
      const copier = new PeerCopier({ hostCopy });
      for (const mib of sizes) {
        const r = { ...(await peerCopy(devices, copier, mib, runs)), hostCopy: hostCopy.kind };
        ours.push(r);
        report(r);
      }
      copier.destroy();
    }
    for (const hostCopy of copiers) {
      for (const mib of quick ? [1] : [1, 64]) {
        for (const ring of [1, 2, 4, 8]) {
          for (const maxPieceMiB of mib === 1 ? [1] : [1, 4, 16]) {
            // At 1 MiB the piece is what `ring` makes it (1 MiB / ring); at 64 MiB the largest piece decides.
            const swept = new PeerCopier({ ring, maxPieceBytes: maxPieceMiB * MiB, hostCopy });
            report({ ...(await peerCopy(devices, swept, mib, runs)), kind: 'sweep', ring, maxPieceMiB, hostCopy: hostCopy.kind });
            swept.destroy();
          }
        }
      }
    }
    if (!values['no-peer']) {
      const peer = hostCopyPeer(Number(values.src ?? 0), Number(values.dst ?? 0), sizes.at(-1)!);
      peer.forEach(report);
      for (const r of ours) {
        const at = (method: string) => peer.find((p) => p['method'] === method && p['bytes'] === r['bytes'])?.['gbps'] as number | undefined;
        const serial = at('pinned-serial');
        const pipelined = at('pinned-pipelined');
        const gbps = r['gbps'] as number;
        report({ kind: 'ratio', hostCopy: r['hostCopy'], mib: r['mib'], oursGBps: gbps, pinnedSerialGBps: serial, pinnedPipelinedGBps: pipelined, ofSerial: serial ? gbps / serial : null, ofPipelined: pipelined ? gbps / pipelined : null });
      }
    }
  } finally {
    devices.forEach((d) => d.close());
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'peer-copy.json'), JSON.stringify({ results }, null, 2));
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
  process.exitCode = 1;
});
