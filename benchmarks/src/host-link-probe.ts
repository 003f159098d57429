/**
 * Why the same transfer between two devices takes twice as long in some processes as in others
 * (ag-gemm f32's communication alone: 2.1–3.3 ms in five invocations, 4.9 in two; benchmarks/README.md).
 * One process times, at 32 MiB (ag-gemm f32's shard): each stage of the host link alone (read-back on
 * each device, the native host copy between two mapped ranges, the upload on each device), then whole
 * transfers (PeerCopier) one way, the other way and both ways at once (as the workload moves them),
 * then the transfers again with a fresh copier (new staging buffers): is a slow mode the process's,
 * or its buffers'? Then the stages two or four at once, two host copies at once, the staging
 * mappings' page sizes, and the transfers with the host copy on the JS thread. It prints the CPUs the process may run on and ran on, so that invocations pinned
 * to different CPUs can be told apart. Run it several times in a row (run scripts in results/).
 *
 *   node dist/host-link-probe.mjs [--mib 32] [--runs 15] [--label TEXT] [--sweep | --stalls | --held-ranges]
 *
 * --sweep times only the transfers, with the copier's ring depth, largest piece and read-ahead swept
 * (each setting twice, the list forward then back, so drift shows), and both ways again beside one
 * submission of compute (~2 ms) on each device, submitted right after the transfers start, as a fused
 * run's first phase is: the transfer should hide under it, not wait for it.
 *
 * --stalls looks for what holds host copies back (a 4 MiB copy took 6.5–24 ms right after a burn,
 * benchmarks/peer-copy.md): the copy from each of 16 read-back buffers and into each of 16 upload
 * buffers of 4 MiB (is one staging buffer slower than another: its memory?), on libuv's pool and on
 * the JS thread; then one copy timed 30 times after idle, right after 500 ms of burn, and during a
 * burn, by libuv's pool and by the JS thread, on mapped staging and on plain arrays: are threads held
 * off the CPU, or is it the memory? (Neither, on two H200s: every copy 0.1-0.7 ms.)
 *
 * --held-ranges counts V8's collections while 8, 16 and 24 mapped ranges of 4 MiB are held as JS
 * ArrayBuffers at once (20 rounds of map, getMappedRange, unmap), whole or as 8-byte anchors: a held
 * range counts as V8 external memory until it is unmapped, and enough of it at once starts major
 * collections (what stopped the JS thread in two-device runs, benchmarks/peer-copy.md).
 */
import { readFileSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { hostCopier, jsHostCopy, openDevices, type HostCopier, PeerCopier, type PeerCopierOptions, type PlacedDeviceHandle } from '@syncopate/runtime';
import { burnGpus } from '@syncopate/core';
import { gcKind } from './js-thread-watch.js';
import { summarize, timeEach } from './stats.js';

const MiB = 1 << 20;

/** The CPU the calling thread last ran on (field 39 of /proc/self/stat) and the CPUs it may use. */
function cpus(): { readonly on: number; readonly allowed: string } {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const allowed = /Cpus_allowed_list:\s*(\S+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? '?';
  return { on: Number(fields[36]), allowed };
}

/** The process's mappings of 4 MiB or more (but Node's own binary): the drivers' staging memory among them, with its page sizes. */
function largeMappings(): Record<string, string>[] {
  const out: Record<string, string>[] = [];
  let current: Record<string, string> | undefined;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const header = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      const bytes = parseInt(header[2]!, 16) - parseInt(header[1]!, 16);
      current = bytes >= 4 * MiB && !header[3]!.endsWith('/node') ? { path: header[3] || '(anonymous)', mib: String(bytes / MiB) } : undefined;
      if (current) out.push(current);
    } else if (current) {
      const field = /^(Rss|KernelPageSize|MMUPageSize|AnonHugePages|Locked):\s*(.*)$/.exec(line);
      if (field) current[field[1]!] = field[2]!;
    }
  }
  return out.filter((m) => m['Rss'] !== '0 kB');
}

async function stages(a: PlacedDeviceHandle, b: PlacedDeviceHandle, bytes: number, runs: number) {
  const gpu = [a, b].map((d) => d.device.createBuffer({ size: bytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST }));
  const read = [a, b].map((d) => d.device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST }));
  const write = [a, b].map((d) => d.device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC }));
  const devices = [a.device, b.device];
  try {
    const readBack = (i: number) =>
      timeEach(runs, 3, async () => {
        const e = devices[i]!.createCommandEncoder();
        e.copyBufferToBuffer(gpu[i]!, 0, read[i]!, 0, bytes);
        devices[i]!.queue.submit([e.finish()]);
        await read[i]!.mapAsync(GPUMapMode.READ);
        read[i]!.unmap();
      });
    const upload = (i: number) =>
      timeEach(runs, 3, async () => {
        await write[i]!.mapAsync(GPUMapMode.WRITE);
        write[i]!.unmap();
        const e = devices[i]!.createCommandEncoder();
        e.copyBufferToBuffer(write[i]!, 0, gpu[i]!, 0, bytes);
        devices[i]!.queue.submit([e.finish()]);
        await devices[i]!.queue.onSubmittedWorkDone();
      });
    const result: Record<string, unknown> = { readBack0: await readBack(0), readBack1: await readBack(1), upload0: await upload(0), upload1: await upload(1) };
    // The same stages at once, as transfers both ways run them: is the slow mode in the DMA?
    const both = (...stages: (() => Promise<unknown>)[]) => timeEach(runs, 3, () => Promise.all(stages.map((s) => s())));
    const once = (i: number, kind: 'read' | 'upload') => async () => {
      const e = devices[i]!.createCommandEncoder();
      if (kind === 'read') e.copyBufferToBuffer(gpu[i]!, 0, read[i]!, 0, bytes);
      else e.copyBufferToBuffer(write[i]!, 0, gpu[i]!, 0, bytes);
      devices[i]!.queue.submit([e.finish()]);
      if (kind === 'read') {
        await read[i]!.mapAsync(GPUMapMode.READ);
        read[i]!.unmap();
      } else await devices[i]!.queue.onSubmittedWorkDone();
    };
    result['readBack0AndReadBack1'] = await both(once(0, 'read'), once(1, 'read'));
    result['upload0AndUpload1'] = await both(once(0, 'upload'), once(1, 'upload'));
    result['readBack0AndUpload1'] = await both(once(0, 'read'), once(1, 'upload'));
    result['allFour'] = await both(once(0, 'read'), once(1, 'read'), once(0, 'upload'), once(1, 'upload'));
    await read[0]!.mapAsync(GPUMapMode.READ);
    await write[1]!.mapAsync(GPUMapMode.WRITE);
    const from = new Uint8Array(read[0]!.getMappedRange());
    const to = new Uint8Array(write[1]!.getMappedRange());
    const { copier } = hostCopier();
    result['hostCopy'] = { kind: copier.kind, ...(await timeEach(runs, 2, () => copier.copy(to, from))) };
    await read[1]!.mapAsync(GPUMapMode.READ);
    await write[0]!.mapAsync(GPUMapMode.WRITE);
    const from1 = new Uint8Array(read[1]!.getMappedRange());
    const to0 = new Uint8Array(write[0]!.getMappedRange());
    result['twoHostCopies'] = await timeEach(runs, 2, () => Promise.all([copier.copy(to, from), copier.copy(to0, from1)]));
    [...read, ...write].forEach((x) => x.unmap());
    return result;
  } finally {
    [...gpu, ...read, ...write].forEach((x) => x.destroy());
  }
}

async function transfers(a: PlacedDeviceHandle, b: PlacedDeviceHandle, bytes: number, runs: number, options: PeerCopierOptions = {}, besideCompute = false) {
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  const [x, y] = [a, b].map((d) => d.device.createBuffer({ size: bytes, usage })) as [GPUBuffer, GPUBuffer];
  const copier = new PeerCopier(options);
  const runsOf = [{ offset: 0, bytes }];
  const oneWay = () => copier.copyRuns({ device: a, buffer: x }, { device: b, buffer: y }, runsOf, 'done');
  const otherWay = () => copier.copyRuns({ device: b, buffer: y }, { device: a, buffer: x }, runsOf, 'done');
  try {
    return {
      zeroToOne: await timeEach(runs, 3, oneWay),
      oneToZero: await timeEach(runs, 3, otherWay),
      // Different buffers each way would be closer to the workload, but the bytes do not matter here.
      bothWays: await timeEach(runs, 3, () => Promise.all([oneWay(), otherWay()])),
      // One burn submission a device (burnGpus's own size, ~2 ms), submitted after the transfers' first read-backs.
      ...(besideCompute && {
        computeAlone: await timeEach(runs, 3, () => burnGpus([a.device, b.device], 0.001)),
        bothWaysBesideCompute: await timeEach(runs, 3, () => Promise.all([oneWay(), otherWay(), burnGpus([a.device, b.device], 0.001)])),
      }),
    };
  } finally {
    copier.destroy();
    x.destroy();
    y.destroy();
  }
}

/** Each copy's time, in order (ms). */
async function eachCopy(times: number, copy: () => Promise<unknown>, pauseMs = 0): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < times; i++) {
    if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    const start = performance.now();
    await copy();
    out.push(performance.now() - start);
  }
  return out;
}

async function stalls(a: PlacedDeviceHandle, b: PlacedDeviceHandle, report: (r: Record<string, unknown>) => void) {
  const piece = 4 * MiB;
  const buffers = 16;
  const source = a.device.createBuffer({ size: piece, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
  const reads = Array.from({ length: buffers }, () => a.device.createBuffer({ size: piece, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST }));
  const writes = Array.from({ length: buffers }, () => b.device.createBuffer({ size: piece, usage: GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC, mappedAtCreation: true }));
  try {
    const e = a.device.createCommandEncoder();
    for (const r of reads) e.copyBufferToBuffer(source, 0, r, 0, piece);
    a.device.queue.submit([e.finish()]);
    await Promise.all(reads.map((r) => r.mapAsync(GPUMapMode.READ)));
    const from = reads.map((r) => new Uint8Array(r.getMappedRange()));
    const to = writes.map((w) => new Uint8Array(w.getMappedRange()));
    const { copier } = hostCopier();
    // Per buffer, one after another: median of 5 copies out of read-back i into upload 0, and out of read-back 0 into upload i.
    const oneByOne = async (copy: (dst: Uint8Array, src: Uint8Array) => Promise<void>) => {
      const fromReadback: number[] = [];
      const intoUpload: number[] = [];
      for (const f of from) fromReadback.push((await timeEach(5, 0, () => copy(to[0]!, f))).median);
      for (const t of to) intoUpload.push((await timeEach(5, 0, () => copy(t, from[0]!))).median);
      return { fromReadback, intoUpload };
    };
    report({ kind: 'staging', bytes: piece, hostCopy: copier.kind, pool: await oneByOne((d, s) => copier.copy(d, s)), jsThread: await oneByOne((d, s) => jsHostCopy.copy(d, s)) });
    // Who copies (libuv's pool, the JS thread) crossed with what memory (mapped staging, or two plain
    // arrays): a stall that follows the threads is scheduling; one that follows the memory is the mapping's.
    const copiers: [string, HostCopier][] = [['libuv', copier], ['js thread', jsHostCopy]];
    const plain = [new Uint8Array(piece).fill(1), new Uint8Array(piece)] as const;
    const summary = (xs: number[]) => ({ ...summarize(xs), over1ms: xs.filter((x) => x > 1).length, first5: xs.slice(0, 5).map((x) => Number(x.toFixed(3))) });
    for (const [memory, dst, src] of [['mapped', to[0]!, from[0]!], ['plain', plain[1], plain[0]]] as const) {
      for (const [who, c] of copiers) {
        const copyOnce = () => c.copy(dst, src);
        const afterIdle = await eachCopy(30, copyOnce, 20);
        await burnGpus([a.device, b.device], 500);
        const afterBurn = await eachCopy(30, copyOnce);
        const burning = burnGpus([a.device, b.device], 300);
        const duringBurn = await eachCopy(30, copyOnce);
        await burning;
        report({ kind: 'copy-timing', bytes: piece, copier: who, memory, afterIdle: summary(afterIdle), afterBurn: summary(afterBurn), duringBurn: summary(duringBurn), cpus: cpus() });
      }
    }
  } finally {
    [source, ...reads, ...writes].forEach((x) => x.destroy());
  }
}

async function heldRanges(device: GPUDevice, report: (r: Record<string, unknown>) => void) {
  let seen: Record<string, number> = {};
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) seen[gcKind(e)] = (seen[gcKind(e)] ?? 0) + 1;
  });
  observer.observe({ entryTypes: ['gc'] });
  for (const held of [8, 16, 24]) {
    const buffers = Array.from({ length: held }, () => device.createBuffer({ size: 4 * MiB, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST }));
    for (const ranges of ['whole', 'anchors'] as const) {
      seen = {};
      for (let round = 0; round < 20; round++) {
        await Promise.all(buffers.map((b) => b.mapAsync(GPUMapMode.READ)));
        const views = buffers.map((b) => new Uint8Array(ranges === 'whole' ? b.getMappedRange() : b.getMappedRange(0, 8)));
        views.forEach((v) => v[0]); // held, as a host copy holds them
        buffers.forEach((b) => b.unmap());
      }
      await new Promise((resolve) => setTimeout(resolve, 50)); // the observer's entries arrive on a later turn
      report({ kind: 'held-ranges', heldMiB: held * 4, ranges, rounds: 20, collections: seen });
    }
    buffers.forEach((b) => b.destroy());
  }
  observer.disconnect();
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { mib: { type: 'string' }, runs: { type: 'string' }, label: { type: 'string' }, sweep: { type: 'boolean' }, stalls: { type: 'boolean' }, 'held-ranges': { type: 'boolean' } } });
  const bytes = Number(values.mib ?? 32) * MiB;
  const runs = Number(values.runs ?? 15);
  const report = (r: Record<string, unknown>) => console.log(JSON.stringify({ label: values.label ?? '', pid: process.pid, ...r }));
  report({ kind: 'process', cpus: cpus(), uvThreadpoolSize: process.env['UV_THREADPOOL_SIZE'] ?? null });
  const devices = await openDevices(2, { device: { requiredLimits: 'adapter-max' } });
  try {
    const [a, b] = devices as [PlacedDeviceHandle, PlacedDeviceHandle];
    if (values.stalls) {
      await stalls(a, b, report);
      return;
    }
    if (values['held-ranges']) {
      await heldRanges(a.device, report);
      return;
    }
    if (values.sweep) {
      // Pieces in flight, piece size and pieces read back ahead: host copies and uploads in flight are ring x piece, read-backs readAhead x piece.
      const configs = [[4, 4, 4], [4, 4, 8], [2, 4, 8], [8, 4, 8], [4, 2, 8], [4, 2, 16]] as const;
      await burnGpus([a.device, b.device], 200); // the burn kernel compiled and sized before anything is timed
      for (const [ring, maxPieceMiB, readAhead] of [...configs, ...[...configs].reverse()]) {
        const options = { ring, readAhead, maxPieceBytes: maxPieceMiB * MiB, minPieceBytes: Math.min(1, maxPieceMiB) * MiB };
        report({ kind: 'sweep', ring, maxPieceMiB, readAhead, bytes, ...(await transfers(a, b, bytes, runs, options, true)) });
      }
      return;
    }
    report({ kind: 'stages', bytes, ...(await stages(a, b, bytes, runs)), cpus: cpus() });
    report({ kind: 'transfers', copier: 'first', bytes, ...(await transfers(a, b, bytes, runs)), cpus: cpus() });
    report({ kind: 'transfers', copier: 'fresh', bytes, ...(await transfers(a, b, bytes, runs)), cpus: cpus() });
    report({ kind: 'mappings', mappings: largeMappings() });
    report({ kind: 'transfers', copier: 'js host copy', bytes, ...(await transfers(a, b, bytes, runs, { hostCopy: jsHostCopy })), cpus: cpus() });
  } finally {
    devices.forEach((d) => d.close());
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
  process.exitCode = 1;
});
