/**
 * What each WebGPU call a run over two devices makes costs the JS thread. In a CPU profile of the
 * two-device gemm-rs f16 runs (results/2gpu-2026-11-26i, call 1) the thread was never idle: half its
 * samples were inside WebGPU calls made by the copier (a piece's read-back, its upload) and by the
 * phases' launches. This probe times each call alone, in a loop, on one device with the other open
 * (as in a run), on the JS thread's clock (and prints the adapter's features first):
 *
 *  - encode: createCommandEncoder + copyBufferToBuffer + finish (a piece's copy, not submitted);
 *  - submit 4 KiB / 4 MiB: queue.submit of one such copy (the wait for it is not timed);
 *  - mapAsync read / write: the call alone (its promise awaited afterwards, untimed);
 *  - getMappedRange, unmap of a mapped 4 MiB MAP_READ and MAP_WRITE buffer;
 *  - launch: pushErrorScope + an encoder with one compute pass of one dispatch + finish + submit +
 *    onSubmittedWorkDone + popErrorScope (what Executor.run does);
 *  - turn: one turn of the event loop (setImmediate) with maps pending on both devices: Dawn's own
 *    polling of each device, which the binding does on the loop's turns.
 *
 * Median, p10 and p90 in microseconds over `--runs` calls after 20 warm-ups; one JSON line a call.
 *
 *   node dist/webgpu-call-cost.mjs [--runs 200]
 */
import { parseArgs } from 'node:util';
import { openDevices, openGpu } from '@syncopate/runtime';

const MiB = 1 << 20;

function report(name: string, us: number[]): void {
  const s = [...us].sort((a, b) => a - b);
  const at = (q: number) => +s[Math.min(s.length - 1, Math.floor(q * s.length))]!.toFixed(1);
  console.log(JSON.stringify({ kind: 'call', name, runs: s.length, medianUs: at(0.5), p10Us: at(0.1), p90Us: at(0.9) }));
}

/** Times `body` `runs` times after 20 untimed calls; `before` and `after` (untimed) run around each call. */
async function time(name: string, runs: number, body: () => void, hooks: { before?: () => void; after?: () => Promise<unknown> } = {}): Promise<void> {
  const us: number[] = [];
  for (let i = 0; i < runs + 20; i++) {
    hooks.before?.();
    const at = performance.now();
    body();
    const spent = (performance.now() - at) * 1000;
    await hooks.after?.();
    if (i >= 20) us.push(spent);
  }
  report(name, us);
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { runs: { type: 'string' } } });
  const runs = Number(values.runs ?? 200);
  const handles = await openDevices(2);
  const [device, other] = handles.map((h) => h.device) as [GPUDevice, GPUDevice];
  // The adapter's features (with allow_unsafe_apis, as the runtime opens it): does Dawn offer a mappable
  // buffer a kernel can bind ('buffer-map-extended-usages', 'buffer-map-write-extended-usages'), which
  // would let a transfer skip a copy on the queue?
  const adapter = await (await openGpu()).gpu.requestAdapter();
  const features = [...(adapter?.features ?? [])].sort();
  console.log(JSON.stringify({ kind: 'setup', devices: handles.map((h) => h.placement.description), adapter: handles[0]!.adapterInfo.description, features }));
  const source = device.createBuffer({ size: 16 * MiB, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
  const read = device.createBuffer({ size: 4 * MiB, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const write = device.createBuffer({ size: 4 * MiB, usage: GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC });
  const otherRead = other.createBuffer({ size: 4 * MiB, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const copy = (bytes: number) => {
    const encoder = device.createCommandEncoder();
    encoder.copyBufferToBuffer(source, 0, read, 0, bytes);
    return encoder.finish();
  };
  const drained = () => device.queue.onSubmittedWorkDone();

  await time('encode', runs, () => void copy(4 * MiB));
  for (const bytes of [4096, 4 * MiB]) {
    let buffer: GPUCommandBuffer | undefined;
    await time(`submit ${bytes === 4096 ? '4 KiB' : '4 MiB'}`, runs, () => device.queue.submit([buffer!]), { before: () => (buffer = copy(bytes)), after: drained });
  }

  let mapped: Promise<void> | undefined;
  for (const [label, buffer, mode] of [['read', read, GPUMapMode.READ], ['write', write, GPUMapMode.WRITE]] as const) {
    await time(`mapAsync ${label}`, runs, () => void (mapped = buffer.mapAsync(mode, 0, 4 * MiB)), {
      after: async () => {
        await mapped;
        buffer.unmap();
      },
    });
  }
  for (const [label, buffer, mode] of [['read', read, GPUMapMode.READ], ['write', write, GPUMapMode.WRITE]] as const) {
    await buffer.mapAsync(mode, 0, 4 * MiB);
    await time(`getMappedRange ${label}`, runs, () => void buffer.getMappedRange(0, 4 * MiB), {
      after: async () => {
        buffer.unmap();
        await buffer.mapAsync(mode, 0, 4 * MiB);
      },
    });
    buffer.getMappedRange(0, 4 * MiB);
    await time(`unmap ${label}`, runs, () => buffer.unmap(), {
      after: async () => {
        await buffer.mapAsync(mode, 0, 4 * MiB);
        buffer.getMappedRange(0, 4 * MiB);
      },
    });
    buffer.unmap();
  }

  const module = device.createShaderModule({ code: '@group(0) @binding(0) var<storage, read_write> b: array<u32>; @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) { b[g.x] = g.x; }' });
  const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
  const bindGroup = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: source } }] });
  let popped: Promise<unknown> = Promise.resolve();
  let done: Promise<unknown> = Promise.resolve();
  await time(
    'launch',
    runs,
    () => {
      device.pushErrorScope('validation');
      const encoder = device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, bindGroup);
      pass.dispatchWorkgroups(64);
      pass.end();
      device.queue.submit([encoder.finish()]);
      done = device.queue.onSubmittedWorkDone();
      popped = device.popErrorScope();
    },
    { after: () => Promise.all([popped, done]) },
  );

  // One turn of the loop while maps are pending on both devices (the binding polls Dawn on turns).
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
  const pending = () => Promise.all([read.mapAsync(GPUMapMode.READ, 0, 4 * MiB), otherRead.mapAsync(GPUMapMode.READ, 0, 4 * MiB)]);
  const us: number[] = [];
  for (let i = 0; i < runs; i++) {
    // A long copy queued ahead keeps the maps pending while the turns are timed.
    device.queue.submit([copy(4 * MiB), copy(4 * MiB), copy(4 * MiB), copy(4 * MiB)]);
    const maps = pending();
    const at = performance.now();
    await turn();
    us.push((performance.now() - at) * 1000);
    await maps;
    read.unmap();
    otherRead.unmap();
  }
  report('turn, maps pending on both devices', us);
  for (const h of handles) h.device.destroy();
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
  process.exit(1); // the devices stay open after a failure
});
