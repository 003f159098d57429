import { openGpu, type GpuHandle } from '../src/index.js';

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
