import { openGpu, type CompiledKernel, type Executor, type GpuHandle } from '../src/index.js';

/**
 * Whether this machine has a WebGPU adapter at all. Tests skip only when it has none, and say why;
 * with Mesa lavapipe installed (scripts/setup-webgpu.sh) every test runs.
 */
export type Probe = { readonly ok: true; readonly gpu: GpuHandle } | { readonly ok: false; readonly why: string };

async function probe(): Promise<Probe> {
  try {
    const gpu = await openGpu();
    const adapter = await gpu.gpu.requestAdapter();
    if (adapter === null) return { ok: false, why: 'requestAdapter() returned null' };
    return { ok: true, gpu };
  } catch (error) {
    return { ok: false, why: error instanceof Error ? error.message : String(error) };
  }
}

export const webgpu = await probe();
export const hasWebGPU = webgpu.ok;
if (!webgpu.ok) console.warn(`skipping GPU tests: no WebGPU adapter (${webgpu.why})`);

export function gpuHandle(): GpuHandle {
  if (!webgpu.ok) throw new Error('no WebGPU adapter');
  return webgpu.gpu;
}

/** WGSL of c = a + b over f32 arrays. */
export const ADD_WGSL = `
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3u) {
  if (id.x < arrayLength(&c)) {
    c[id.x] = a[id.x] + b[id.x];
  }
}
`;

/** Allocates `a`, `b` and a readable `c` on `executor` and compiles ADD_WGSL over them. */
export async function prepareAdd(executor: Executor, a: Float32Array, b: Float32Array): Promise<CompiledKernel> {
  const n = a.length;
  await executor.allocate([
    { name: 'a', bytes: 4 * n, usage: 'storage', init: a },
    { name: 'b', bytes: 4 * n, usage: 'storage', init: b },
    { name: 'c', bytes: 4 * n, usage: 'storage', readback: true },
  ]);
  return executor.compile({
    name: 'add',
    wgsl: ADD_WGSL,
    entryPoint: 'main',
    bindings: [
      { binding: 0, buffer: 'a' },
      { binding: 1, buffer: 'b' },
      { binding: 2, buffer: 'c' },
    ],
    workgroups: [Math.ceil(n / 64)],
  });
}
