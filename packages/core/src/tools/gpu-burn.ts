/**
 * GPU work that does nothing but keep devices busy. A GPU's clock follows its load over seconds: runs
 * that mostly wait on the host leave it at idle clocks (345 MHz on two H200s), and the kernel of a
 * workload alone, run over and over, still leaves gaps of host time between runs (ring-attn's, at
 * 31–45% utilization, climbed from 383 to 1,260 MHz in 4 s:
 * benchmarks/results/h200x2-2026-11-26c/call3/clocks.csv.xz). A bench over several devices runs this between its rounds (bench.ts). Each invocation runs
 * a chain of dependent FMAs; the dispatch doubles until one submission takes BURN_SUBMIT_MS, so one
 * kernel suits a software adapter and an H200 alike, and two submissions are kept in flight so the
 * queue never runs dry.
 */
import { withTimeout } from '@syncopate/runtime';

const WORKGROUP = 64;
const CHAIN = 4096;
const SHADER = /* wgsl */ `
@group(0) @binding(0) var<storage, read_write> sink: array<f32>;
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) id: vec3u) {
  var x = f32(id.x);
  for (var i = 0u; i < ${CHAIN}u; i++) { x = fma(x, 0.9999999, 0.5); }
  // Never true in practice; the store keeps the chain from being optimised away.
  if (x == -1.0) { sink[0] = x; }
}`;
/** A submission long enough that the host's turn between two is a small part of it. */
const BURN_SUBMIT_MS = 2;
/** WebGPU's limit on workgroups in one dimension. */
const MAX_WORKGROUPS = 65_535;
/** Longest wait on one submission. */
const SUBMIT_TIMEOUT_MS = 10_000;

interface Burner {
  readonly pipeline: GPUComputePipeline;
  readonly bindGroup: GPUBindGroup;
  workgroups: number;
}

const burners = new WeakMap<GPUDevice, Burner>();

function burner(device: GPUDevice): Burner {
  let b = burners.get(device);
  if (!b) {
    const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module: device.createShaderModule({ code: SHADER, label: 'gpu-burn' }), entryPoint: 'main' } });
    const sink = device.createBuffer({ size: 4, usage: GPUBufferUsage.STORAGE, label: 'gpu-burn sink' });
    const bindGroup = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: sink } }] });
    burners.set(device, (b = { pipeline, bindGroup, workgroups: 1 }));
  }
  return b;
}

function submit(device: GPUDevice, b: Burner): Promise<void> {
  const encoder = device.createCommandEncoder({ label: 'gpu-burn' });
  const pass = encoder.beginComputePass();
  pass.setPipeline(b.pipeline);
  pass.setBindGroup(0, b.bindGroup);
  pass.dispatchWorkgroups(b.workgroups);
  pass.end();
  device.queue.submit([encoder.finish()]);
  return withTimeout(device.queue.onSubmittedWorkDone(), SUBMIT_TIMEOUT_MS, 'gpu-burn', device);
}

/**
 * Keeps every device busy with the burn kernel for `ms` of host time (none for `ms` <= 0); the
 * submissions each device ran. Every submission is done when it returns. `now` is the host clock in
 * ms (tests pass their own, to run it without timing it).
 */
export async function burnGpus(devices: readonly GPUDevice[], ms: number, now: () => number = () => performance.now()): Promise<number[]> {
  if (ms <= 0) return devices.map(() => 0);
  const burning = devices.map(burner); // the first call compiles the kernel: not part of `ms`
  const until = now() + ms;
  return Promise.all(
    devices.map(async (device, d) => {
      const b = burning[d]!;
      let submissions = 1;
      let inFlight = submit(device, b);
      while (now() < until) {
        const start = now();
        const next = submit(device, b);
        submissions++;
        await inFlight;
        inFlight = next;
        // Grown until a submission takes BURN_SUBMIT_MS (the wait covered the one before this one).
        if (now() - start < BURN_SUBMIT_MS && b.workgroups < MAX_WORKGROUPS) b.workgroups = Math.min(MAX_WORKGROUPS, b.workgroups * 2);
      }
      await inFlight;
      return submissions;
    }),
  );
}
