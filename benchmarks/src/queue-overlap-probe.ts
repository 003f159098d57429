/**
 * What one WebGPU queue lets run at once: a device has one queue, so a transfer's read-backs and
 * uploads share it with the phases of compute. This probe asks, on one device, whether a copy
 * submitted beside a compute submission runs *while* it computes, and what decides it:
 *
 *  - `burn`: a compute submission alone (grown toward `--burn-ms`, at most 65,535 workgroups: 0.54 ms
 *    on an H100; it binds tensor T read_write, as fused kernels bind what they write); `upload`: 32 MiB from a MAP_WRITE staging buffer into a device buffer;
 *    `readBack`: 32 MiB from a device buffer into a MAP_READ staging buffer, mapped.
 *  - `burnThenUploadFree`: the upload submitted right after the burn, into a buffer the burn does not
 *    bind (F, last used by a copy); `burnThenUploadBound`: into T, which the burn binds (a write after
 *    its use: Dawn must put a barrier between them). Wall to both done, burn's own GPU time.
 *  - `readBackThenBurn`: the read-back first, then the burn: when does the map resolve, and is the
 *    burn held back; `burnThenReadBack`: the other order: does the map wait for the burn?
 *  - `burnThenUploadFreeThenLand`: as `burnThenUploadFree`, then F copied into T (a landing copy, as a
 *    mailbox would be put in place before the phase that reads it).
 *
 * Overlap shows as a wall near max(burn, copy) rather than their sum. Each case 3 warm-ups, then
 * `--runs` runs; medians and spreads in ms, one JSON line a case.
 *
 *   node dist/queue-overlap-probe.mjs [--mib 32] [--runs 15] [--burn-ms 2] [--device N]
 */
import { parseArgs } from 'node:util';
import { openDevices, withTimeout } from '@syncopate/runtime';
import { summarize } from './stats.js';

const MiB = 1 << 20;
const WORKGROUP = 64;
const SHADER = /* wgsl */ `
@group(0) @binding(0) var<storage, read_write> t: array<f32>;
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) id: vec3u) {
  var x = t[id.x % 1024u];
  for (var i = 0u; i < 4096u; i++) { x = fma(x, 0.9999999, 0.5); }
  if (x == -1.0) { t[0] = x; } // never true: keeps the chain
}`;

interface Probe {
  readonly device: GPUDevice;
  readonly bytes: number;
  readonly t: GPUBuffer;
  readonly f: GPUBuffer;
  readonly mw: GPUBuffer;
  readonly mr: GPUBuffer;
  readonly pipeline: GPUComputePipeline;
  readonly bindGroup: GPUBindGroup;
  readonly query: GPUQuerySet | undefined;
  readonly resolve: GPUBuffer | undefined;
  readonly readTicks: GPUBuffer | undefined;
  workgroups: number;
  /** Burns submitted since the case's body began (its GPU time is read where there was one). */
  burns: number;
}

const done = (p: Probe) => withTimeout(p.device.queue.onSubmittedWorkDone(), 10_000, 'queue-overlap-probe', p.device);

function submitBurn(p: Probe): void {
  p.burns++;
  const e = p.device.createCommandEncoder();
  const pass = e.beginComputePass(p.query ? { timestampWrites: { querySet: p.query, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 } } : {});
  pass.setPipeline(p.pipeline);
  pass.setBindGroup(0, p.bindGroup);
  pass.dispatchWorkgroups(p.workgroups);
  pass.end();
  if (p.query) e.resolveQuerySet(p.query, 0, 2, p.resolve!, 0);
  p.device.queue.submit([e.finish()]);
}

/** The last burn's GPU time (ms), read once the queue is idle. */
async function burnGpuMs(p: Probe): Promise<number | undefined> {
  if (!p.query) return undefined;
  const e = p.device.createCommandEncoder();
  e.copyBufferToBuffer(p.resolve!, 0, p.readTicks!, 0, 16);
  p.device.queue.submit([e.finish()]);
  await p.readTicks!.mapAsync(GPUMapMode.READ);
  const [begin, end] = new BigUint64Array(p.readTicks!.getMappedRange().slice(0));
  p.readTicks!.unmap();
  return Number(end! - begin!) / 1e6;
}

function submitCopy(p: Probe, from: GPUBuffer, to: GPUBuffer): void {
  const e = p.device.createCommandEncoder();
  e.copyBufferToBuffer(from, 0, to, 0, p.bytes);
  p.device.queue.submit([e.finish()]);
}

/** The upload staging mapped and unmapped again, as the copier's are before their copy. */
async function stageUpload(p: Probe): Promise<void> {
  await p.mw.mapAsync(GPUMapMode.WRITE);
  p.mw.unmap();
}

async function mapReadBack(p: Probe, start: number): Promise<number> {
  await withTimeout(p.mr.mapAsync(GPUMapMode.READ), 10_000, 'queue-overlap-probe read-back', p.device);
  const at = performance.now() - start;
  p.mr.unmap();
  return at;
}

/** One case: `prepare` untimed, then `body` timed from its start until the queue is idle. */
type Case = { readonly prepare?: (p: Probe) => Promise<void>; readonly body: (p: Probe, start: number) => Promise<Record<string, number>> };

const cases: Record<string, Case> = {
  burn: { body: async (p) => (submitBurn(p), await done(p), {}) },
  upload: { prepare: stageUpload, body: async (p) => (submitCopy(p, p.mw, p.f), await done(p), {}) },
  readBack: { body: async (p, start) => (submitCopy(p, p.f, p.mr), { mappedMs: await mapReadBack(p, start) }) },
  burnThenUploadFree: { prepare: stageUpload, body: async (p) => (submitBurn(p), submitCopy(p, p.mw, p.f), await done(p), {}) },
  burnThenUploadBound: { prepare: stageUpload, body: async (p) => (submitBurn(p), submitCopy(p, p.mw, p.t), await done(p), {}) },
  uploadFreeThenBurn: { prepare: stageUpload, body: async (p) => (submitCopy(p, p.mw, p.f), submitBurn(p), await done(p), {}) },
  readBackThenBurn: {
    body: async (p, start) => {
      submitCopy(p, p.f, p.mr);
      submitBurn(p);
      const mappedMs = await mapReadBack(p, start);
      await done(p);
      return { mappedMs };
    },
  },
  burnThenReadBack: {
    body: async (p, start) => {
      submitBurn(p);
      submitCopy(p, p.f, p.mr);
      const mappedMs = await mapReadBack(p, start);
      await done(p);
      return { mappedMs };
    },
  },
  burnThenUploadFreeThenLand: {
    prepare: stageUpload,
    body: async (p) => (submitBurn(p), submitCopy(p, p.mw, p.f), submitCopy(p, p.f, p.t), await done(p), {}),
  },
};

async function open(device: GPUDevice, bytes: number, burnMs: number): Promise<Probe> {
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  const t = device.createBuffer({ size: bytes, usage, label: 'T (bound by the burn)' });
  const pipeline = await device.createComputePipelineAsync({ layout: 'auto', compute: { module: device.createShaderModule({ code: SHADER }), entryPoint: 'main' } });
  const timestamps = device.features.has('timestamp-query');
  const p: Probe = {
    device,
    bytes,
    t,
    f: device.createBuffer({ size: bytes, usage, label: 'F (free)' }),
    mw: device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC }),
    mr: device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST }),
    pipeline,
    bindGroup: device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: t } }] }),
    query: timestamps ? device.createQuerySet({ type: 'timestamp', count: 2 }) : undefined,
    resolve: timestamps ? device.createBuffer({ size: 16, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC }) : undefined,
    readTicks: timestamps ? device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST }) : undefined,
    workgroups: 1,
    burns: 0,
  };
  // Grown until one burn takes burnMs on the host's clock (after two untimed: the first compiles).
  for (let i = 0; i < 2; i++) submitBurn(p);
  await done(p);
  for (;;) {
    const start = performance.now();
    submitBurn(p);
    await done(p);
    if (performance.now() - start >= burnMs || p.workgroups >= 65_535) break;
    p.workgroups = Math.min(65_535, p.workgroups * 2);
  }
  return p;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { mib: { type: 'string' }, runs: { type: 'string' }, 'burn-ms': { type: 'string' }, device: { type: 'string' } } });
  const bytes = Number(values.mib ?? 32) * MiB;
  const runs = Number(values.runs ?? 15);
  const index = Number(values.device ?? 0);
  const devices = await openDevices(index + 1, { device: { requiredLimits: 'adapter-max' } });
  try {
    const handle = devices[index]!;
    const p = await open(handle.device, bytes, Number(values['burn-ms'] ?? 2));
    console.log(JSON.stringify({ kind: 'setup', device: handle.placement, bytes, workgroups: p.workgroups }));
    for (const [name, c] of Object.entries(cases)) {
      const walls: number[] = [];
      const burns: number[] = [];
      const extra: Record<string, number[]> = {};
      for (let i = 0; i < runs + 3; i++) {
        await c.prepare?.(p);
        p.burns = 0;
        const start = performance.now();
        const seen = await c.body(p, start);
        const wall = performance.now() - start;
        const burnMs = p.burns > 0 ? await burnGpuMs(p) : undefined;
        if (i < 3) continue;
        walls.push(wall);
        if (burnMs !== undefined) burns.push(burnMs);
        for (const [k, v] of Object.entries(seen)) (extra[k] ??= []).push(v);
      }
      console.log(
        JSON.stringify({ kind: 'case', case: name, wallMs: summarize(walls), ...(burns.length > 0 && { burnGpuMs: summarize(burns) }), ...Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, summarize(v)])) }),
      );
    }
  } finally {
    devices.forEach((d) => d.close());
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
  process.exitCode = 1;
});
