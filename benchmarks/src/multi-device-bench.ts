/**
 * Several WebGPU devices: the peer-copy bandwidth between two devices (through host staging
 * buffers), and ag-gemm / gemm-rs with their ranks on two devices, fused (transfers overlapping the
 * phases) against the same kernels with no overlap, each verified at a smaller shape first. Devices
 * go on the machine's GPUs in turn (two on one GPU when it has one: the bytes still travel through
 * the host). Prints JSON lines and writes multi-device.json into the directory given (or $OUT).
 *
 *   node dist/multi.mjs [--quick] [--out DIR] [--dtypes f32,f16] [--no-peer-copy]
 *
 * The peer-copy rows here are the sustained rate with several transfers in flight; peercopy.mjs
 * (peer-copy-bench.ts) has the copier's single-transfer figures beside the PyTorch peer.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { emitPlacedKernels } from '@syncopate/backends';
import { compileOrThrow, getWorkload, PlacedSession, runWorkload } from '@syncopate/core';
import { openDevices, PeerCopier, type PlacedDeviceHandle } from '@syncopate/runtime';
import { summarize } from './stats.js';

const MiB = 1 << 20;

async function peerCopyBandwidth(devices: readonly PlacedDeviceHandle[], mib: number, runs: number, inFlight: number) {
  const bytes = mib * MiB;
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  const [a, b] = devices as [PlacedDeviceHandle, PlacedDeviceHandle];
  // `inFlight` chunks of `mib` each move at once: sustained bandwidth, as a phase's sends do.
  const src = a.device.createBuffer({ size: bytes * inFlight, usage });
  const dst = b.device.createBuffer({ size: bytes * inFlight, usage });
  const copier = new PeerCopier({ inFlight });
  const once = () =>
    Promise.all(
      Array.from({ length: inFlight }, (_, i) =>
        copier.copyRuns({ device: a, buffer: src }, { device: b, buffer: dst }, [{ offset: i * bytes, bytes }], 'done'),
      ),
    );
  try {
    for (let i = 0; i < 3; i++) await once();
    const ms: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      await once();
      ms.push(performance.now() - t);
    }
    const s = summarize(ms);
    return { kind: 'peer-copy', mib, bytes, inFlight, ms: s, gbps: (bytes * inFlight) / (s.median * 1e-3) / 1e9, stagingBuffers: copier.stagingBuffers };
  } finally {
    copier.destroy();
    src.destroy();
    dst.destroy();
  }
}

async function placedWorkload(devices: readonly PlacedDeviceHandle[], workload: 'ag-gemm' | 'gemm-rs', ranks: number, size: number, runs: number, dtype: 'f32' | 'f16') {
  const w = getWorkload(workload);
  // The same total work as a size³ GEMM, as in bench.mjs.
  const shape = workload === 'ag-gemm' ? { m: size, n: size / ranks, k: size } : { m: size, n: size, k: size / ranks };
  const o = { ranks, shape, dtype, block: { m: 128, n: 128, k: 8 } };
  const { kernel, plan } = w.build(o);
  const compiled = compileOrThrow(kernel, plan);
  const rankDevice = Array.from({ length: ranks }, (_, r) => Math.floor((r * devices.length) / ranks));
  const placed = emitPlacedKernels(compiled.module, rankDevice);
  if (placed._tag === 'Left') throw new Error(placed.left.map((d) => d.message).join('\n'));
  const session = await PlacedSession.open(devices, compiled.module, placed.right, w.inputs(o, 1)); // random, as the suite times: a GPU draws less power on zeros
  const time = async (overlap: boolean) => {
    for (let i = 0; i < 3; i++) await session.run({ overlap });
    const ms: number[] = [];
    for (let i = 0; i < runs; i++) ms.push((await session.run({ overlap })).wallMs);
    return summarize(ms);
  };
  try {
    const fused = await time(true);
    const sequential = await time(false);
    const phases = placed.right.devices.map((d) => d.view.phases.length);
    return { kind: `${workload}-placed`, dtype, ranks, devices: devices.length, shape, transferMiB: session.transferBytes / MiB, phases, fused, sequential, speedup: sequential.median / fused.median, tflops: (2 * size ** 3) / (fused.median * 1e-3) / 1e12 };
  } finally {
    session.destroy();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { quick: { type: 'boolean' }, out: { type: 'string' }, dtypes: { type: 'string' }, 'no-peer-copy': { type: 'boolean' } } });
  const dtypes = (values.dtypes ?? 'f32').split(',') as ('f32' | 'f16')[];
  const out = values.out ?? process.env.OUT ?? '.';
  const quick = values.quick ?? false;
  const devices = await openDevices(2, { device: { requiredLimits: 'adapter-max' } });
  const results: Record<string, unknown>[] = [];
  const report = (r: Record<string, unknown>) => {
    results.push(r);
    console.log(JSON.stringify(r));
  };
  try {
    report({ kind: 'devices', placements: devices.map((d) => d.placement.description), adapter: devices[0]!.adapterInfo });
    for (const dtype of dtypes) {
      for (const workload of ['ag-gemm', 'gemm-rs'] as const) {
        for (const ranks of [2, 4]) {
          const r = await runWorkload({ workload, ranks, shape: { m: 512, n: 256, k: 256 }, dtype, order: 'chunk-arrival', backend: 'auto', seed: 1, handles: devices }).catch((e: unknown) => e as Error);
          report(r instanceof Error ? { kind: 'verify', workload, dtype, ranks, error: String(r) } : { kind: 'verify', workload, dtype, ranks, devices: r.devices, backend: r.backend, verified: r.verified, maxAbsError: r.maxAbsError });
        }
      }
    }
    for (const mib of values['no-peer-copy'] ? [] : quick ? [1, 16] : [1, 4, 16, 64, 256]) {
      report(await peerCopyBandwidth(devices, mib, quick ? 3 : 10, 1));
      if (mib <= 64) report(await peerCopyBandwidth(devices, mib, quick ? 3 : 10, 4));
    }
    const size = quick ? 1024 : 4096;
    for (const dtype of dtypes) {
      for (const workload of ['ag-gemm', 'gemm-rs'] as const) {
        for (const ranks of [2, 4]) {
          // One failing row (f16 where the device lacks it) is reported, and the others still run.
          report(await placedWorkload(devices, workload, ranks, size, quick ? 3 : 10, dtype).catch((e: unknown) => ({ kind: `${workload}-placed`, dtype, ranks, error: String(e) })));
        }
      }
    }
  } finally {
    devices.forEach((d) => d.close());
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'multi-device.json'), JSON.stringify({ results }, null, 2));
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
  process.exitCode = 1;
});
