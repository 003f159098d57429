import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  Executor,
  LimitExceededError,
  ShaderCompileError,
  UsageError,
  ValidationError,
  requestDevice,
  type DeviceHandle,
} from '../src/index.js';
import { ADD_WGSL, gpuHandle, hasWebGPU, prepareAdd } from './webgpu.js';

/** A kernel that keeps the GPU busy for a measurable time: 4 workgroups of arithmetic into `sum`. */
async function busyKernel(executor: Executor) {
  await executor.allocate([{ name: 'sum', bytes: 4 * 64, usage: 'storage' }]);
  return executor.compile({
    name: 'busy',
    wgsl: `
@group(0) @binding(0) var<storage, read_write> sum: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) i: u32) {
  var s = 0u;
  for (var k = 0u; k < 20000u; k++) { s = s * 1664525u + k; }
  sum[i] = s;
}`,
    entryPoint: 'main',
    bindings: [{ binding: 0, buffer: 'sum' }],
    workgroups: [4],
  });
}

/** The device's pushErrorScope and popErrorScope calls while `body` runs: `push(filter)` for each push, 'pop' for each pop. */
async function scopeCalls(device: GPUDevice, body: () => Promise<unknown>, push: (filter: GPUErrorFilter) => string): Promise<string[]> {
  const calls: string[] = [];
  const { pushErrorScope, popErrorScope } = device;
  device.pushErrorScope = (filter) => (calls.push(push(filter)), pushErrorScope.call(device, filter));
  device.popErrorScope = () => (calls.push('pop'), popErrorScope.call(device));
  try {
    await body();
  } finally {
    Object.assign(device, { pushErrorScope, popErrorScope });
  }
  return calls;
}

describe.skipIf(!hasWebGPU)('Executor', () => {
  let handle: DeviceHandle;
  let executor: Executor;
  beforeAll(async () => {
    handle = await requestDevice(gpuHandle());
  });
  afterAll(() => handle?.close());
  afterEach(() => executor?.destroy());

  it('clears the buffers a launch names before it, on the GPU, between launches of one submission', async () => {
    executor = Executor.create(handle);
    await executor.allocate([{ name: 'count', bytes: 4, usage: 'storage', init: new Uint32Array([100]), readback: true }]);
    const kernel = await executor.compile({
      name: 'count',
      wgsl: '@group(0) @binding(0) var<storage, read_write> n: atomic<u32>;\n@compute @workgroup_size(1) fn main() { atomicAdd(&n, 1u); }',
      entryPoint: 'main',
      bindings: [{ binding: 0, buffer: 'count' }],
      workgroups: [5],
    });
    await executor.run([{ kernel }, { kernel, clear: ['count'] }, { kernel }]);
    // 100 + 5, cleared, + 5 + 5: only what came after the clear is left.
    expect(new Uint32Array(await executor.read('count'))[0]).toBe(10);
  });

  async function addKernel(n: number) {
    const a = Float32Array.from({ length: n }, (_, i) => i * 0.5 - 3);
    const b = Float32Array.from({ length: n }, (_, i) => (i % 7) * 1.25);
    executor = Executor.create(handle);
    const kernel = await prepareAdd(executor, a, b);
    const expected = new Float32Array(n);
    for (let i = 0; i < n; i++) expected[i] = a[i]! + b[i]!;
    return { kernel, expected };
  }

  it('adds two arrays as a CPU loop does', async () => {
    const n = 1000;
    const { kernel, expected } = await addKernel(n);
    const result = await executor.run([{ kernel }]);
    expect(result.wallMs).toBeGreaterThan(0);
    expect(new Float32Array(await executor.read('c'))).toEqual(expected);
    // Again after new inputs, through the kept readback buffer.
    executor.write('a', new Float32Array(n).fill(1));
    executor.write('b', new Float32Array(n).fill(2));
    await executor.run([{ kernel }]);
    expect(new Float32Array(await executor.read('c'))).toEqual(new Float32Array(n).fill(3));
  });

  it('reads back exactly the bytes asked for, though sizes round up to 4', async () => {
    executor = Executor.create(handle);
    await executor.allocate([{ name: 'odd', bytes: 7, usage: 'storage', init: new Uint8Array([1, 2, 3, 4, 5, 6, 7]) }]);
    expect(executor.buffer('odd').size).toBe(8);
    expect([...new Uint8Array(await executor.read('odd'))]).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('reports a WGSL syntax error with its line, column and source line', async () => {
    executor = Executor.create(handle);
    const wgsl = ['@compute @workgroup_size(1)', 'fn main() {', '  let x: u32 = 1u +;', '}'].join('\n');
    const error = await executor
      .compile({ name: 'broken', wgsl, entryPoint: 'main', bindings: [], workgroups: [1] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ShaderCompileError);
    const compile = error as ShaderCompileError;
    expect(compile.name).toBe('ShaderCompileError');
    expect(compile.kernel).toBe('broken');
    const first = compile.messages.find((m) => m.type === 'error');
    expect(first?.line).toBe(3);
    expect(first?.column).toBeGreaterThan(0);
    expect(first?.source).toBe('  let x: u32 = 1u +;');
    expect(compile.message).toContain(`3:${first?.column}: error:`);
    expect(compile.message).toContain('  let x: u32 = 1u +;');
  });

  it('refuses a buffer above maxBufferSize before touching the GPU', async () => {
    executor = Executor.create(handle);
    const createBuffer = vi.spyOn(handle.device, 'createBuffer');
    try {
      const bytes = handle.limits.maxBufferSize + 1;
      const error = await executor.allocate([{ name: 'huge', bytes, usage: 'storage' }]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LimitExceededError);
      expect((error as LimitExceededError).limit).toBe('maxBufferSize');
      expect((error as Error).message).toContain('buffer "huge"');
      expect(createBuffer).not.toHaveBeenCalled();
    } finally {
      createBuffer.mockRestore();
    }
  });

  it('refuses a storage buffer that no binding could hold, and makes none of its batch', async () => {
    executor = Executor.create(handle);
    const bytes = handle.limits.maxStorageBufferBindingSize + 4;
    await expect(
      executor.allocate([
        { name: 'small', bytes: 16, usage: 'storage' },
        { name: 'wide', bytes, usage: 'storage' },
      ]),
    ).rejects.toThrow(/buffer "wide" needs \d+, more than this device's maxStorageBufferBindingSize/);
    await expect(executor.read('small')).rejects.toThrow(UsageError);
  });

  it('times each launch with timestamp queries when the device has them', async () => {
    expect(handle.hasTimestamps).toBe(true); // lavapipe and the GPUs we use have them
    executor = Executor.create(handle);
    const kernel = await busyKernel(executor);
    const timed = await executor.run([{ kernel }, { kernel, workgroups: [8] }]);
    expect(timed.timing).toBe('timestamp-query');
    expect(timed.gpuMs).toHaveLength(2);
    for (const ms of timed.gpuMs!) {
      expect(ms).toBeGreaterThan(0);
      expect(ms).toBeLessThanOrEqual(timed.wallMs + 1);
    }
    // openGpu turns Dawn's quantization off: quantized, every reading is a multiple of 65,536 ns.
    expect(timed.gpuMs!.some((ms) => Math.round(ms * 1e6) % 65_536 !== 0)).toBe(true);
    const untimed = await executor.run([{ kernel }], { timing: false });
    expect(untimed).toEqual({ wallMs: untimed.wallMs, submittedAtMs: untimed.submittedAtMs, doneAtMs: untimed.doneAtMs, timing: 'wall-clock' });
    expect(untimed.doneAtMs! - untimed.submittedAtMs!).toBe(untimed.wallMs);
    expect(untimed.submittedAtMs!).toBeGreaterThanOrEqual(timed.doneAtMs!);
  });

  it('places each launch on the device timeline, one origin for every run, for timelines', async () => {
    executor = Executor.create(handle);
    const kernel = await busyKernel(executor);
    const first = await executor.run([{ kernel }, { kernel }]);
    const second = await executor.run([{ kernel }]);
    const spans = [...first.gpuSpans!, ...second.gpuSpans!];
    expect(spans).toHaveLength(3);
    // The origin is the first launch's begin; each span's length is its gpuMs.
    expect(spans[0]!.beginMs).toBe(0);
    [...first.gpuMs!, ...second.gpuMs!].forEach((ms, i) => expect(spans[i]!.endMs - spans[i]!.beginMs).toBeCloseTo(ms, 9));
    // Launches run in order, within a submit and across submits: the second run's span comes after
    // the first's by at least the host time between the first finishing and the second being submitted.
    expect(spans[1]!.beginMs).toBeGreaterThanOrEqual(spans[0]!.endMs);
    expect(spans[2]!.beginMs - spans[1]!.endMs).toBeGreaterThanOrEqual(second.submittedAtMs! - first.doneAtMs! - 0.001);
  });

  it('falls back to the wall clock on a device without timestamp-query', async () => {
    const plain = await requestDevice(gpuHandle(), { requiredFeatures: [] });
    const local = Executor.create(plain);
    try {
      expect(plain.hasTimestamps).toBe(false);
      await local.allocate([{ name: 'x', bytes: 4, usage: 'storage' }]);
      const kernel = await local.compile({
        name: 'one',
        wgsl: '@group(0) @binding(0) var<storage, read_write> x: u32;\n@compute @workgroup_size(1) fn main() { x = 42u; }',
        entryPoint: 'main',
        bindings: [{ binding: 0, buffer: 'x' }],
        workgroups: [1],
      });
      const result = await local.run([{ kernel }]);
      expect(result.timing).toBe('wall-clock');
      expect(result.gpuMs).toBeUndefined();
      expect(new Uint32Array(await local.read('x'))[0]).toBe(42);
    } finally {
      local.destroy();
      plain.close();
    }
  });

  it('a bounded spin on a flag nobody sets gives up and reports an error code', async () => {
    const MAX_SPINS = 5000;
    const TIMED_OUT = 0xdead0001;
    executor = Executor.create(handle, { timeoutMs: 20_000 });
    await executor.allocate([
      { name: 'flag', bytes: 4, usage: 'storage' },
      { name: 'status', bytes: 8, usage: 'storage' },
    ]);
    const kernel = await executor.compile({
      name: 'wait-flag',
      wgsl: `
@group(0) @binding(0) var<storage, read_write> flag: atomic<u32>;
@group(0) @binding(1) var<storage, read_write> status: array<u32, 2>;
const MAX_SPINS = ${MAX_SPINS}u;
@compute @workgroup_size(1)
fn main() {
  var spins = 0u;
  loop {
    if (atomicLoad(&flag) != 0u) { status[0] = 1u; status[1] = spins; return; }
    spins += 1u;
    if (spins >= MAX_SPINS) { status[0] = ${TIMED_OUT}u; status[1] = spins; return; }
  }
}`,
      entryPoint: 'main',
      bindings: [
        { binding: 0, buffer: 'flag' },
        { binding: 1, buffer: 'status' },
      ],
      workgroups: [1],
    });
    await executor.run([{ kernel }]);
    expect([...new Uint32Array(await executor.read('status'))]).toEqual([TIMED_OUT, MAX_SPINS]);
    // The same kernel with the flag set returns at once.
    executor.write('flag', new Uint32Array([1]));
    await executor.run([{ kernel }]);
    expect([...new Uint32Array(await executor.read('status'))]).toEqual([1, 0]);
  });

  it('reading an unknown buffer names it and lists the known ones', async () => {
    executor = Executor.create(handle);
    await executor.allocate([{ name: 'x', bytes: 4, usage: 'storage' }]);
    await expect(executor.read('y')).rejects.toThrow(new UsageError('no buffer named "y" (allocated: x)'));
    await expect(
      executor.compile({ name: 'k', wgsl: '', entryPoint: 'main', bindings: [{ binding: 0, buffer: 'z' }], workgroups: [1] }),
    ).rejects.toThrow('kernel "k" binding 0: no buffer named "z"');
  });

  it('turns a binding that does not match the WGSL into a ValidationError', async () => {
    executor = Executor.create(handle);
    await executor.allocate([{ name: 'x', bytes: 16, usage: 'storage' }]);
    const error = await executor
      .compile({
        name: 'mismatch',
        wgsl: '@group(0) @binding(0) var<uniform> x: vec4u;\n@compute @workgroup_size(1) fn main() { _ = x; }',
        entryPoint: 'main',
        bindings: [{ binding: 0, buffer: 'x' }],
        workgroups: [1],
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toContain('pipeline of kernel "mismatch"');
  });

  it('refuses a workgroup count above the device limit', async () => {
    const { kernel } = await addKernel(64);
    const max = handle.limits.maxComputeWorkgroupsPerDimension;
    await expect(executor.run([{ kernel, workgroups: [max + 1] }])).rejects.toThrow(LimitExceededError);
  });

  it('pops the error scope of each launch before the next launch on the device pushes its own', async () => {
    executor = Executor.create(handle);
    const kernel = await busyKernel(executor);
    // Two launches in flight at once, as a device's phases are: a scope open across the first's
    // wait would catch the second's errors and be popped in its place.
    const launches = () => Promise.all([executor.run([{ kernel }], { timing: false }), executor.run([{ kernel }], { timing: false })]);
    const calls = await scopeCalls(handle.device, launches, () => 'push');
    expect(calls).toEqual(['push', 'pop', 'push', 'pop']);
  });

  it('keeps the buffer scopes of a read and the scope of a launch apart when both are under way at once', async () => {
    executor = Executor.create(handle);
    const kernel = await busyKernel(executor);
    // The read creates its staging buffer inside two scopes; the launch starts while that is under way.
    const readAndLaunch = () => Promise.all([executor.read('sum'), executor.run([{ kernel }], { timing: false })]);
    const calls = await scopeCalls(handle.device, readAndLaunch, (filter) => filter);
    // Each pushes and pops its own scopes before the other pushes any.
    expect(calls).toEqual(['out-of-memory', 'validation', 'pop', 'pop', 'validation', 'pop']);
  });

  it('runs on two devices at once', async () => {
    const [first, second] = await Promise.all([requestDevice(gpuHandle()), requestDevice(gpuHandle())]);
    const executors = [Executor.create(first), Executor.create(second)];
    try {
      const n = 100;
      const results = await Promise.all(
        executors.map(async (local, d) => {
          await local.allocate([
            { name: 'a', bytes: 4 * n, usage: 'storage', init: new Float32Array(n).fill(d + 1) },
            { name: 'b', bytes: 4 * n, usage: 'storage', init: Float32Array.from({ length: n }, (_, i) => i) },
            { name: 'c', bytes: 4 * n, usage: 'storage' },
          ]);
          const kernel = await local.compile({
            name: `add on device ${d}`,
            wgsl: ADD_WGSL,
            entryPoint: 'main',
            bindings: [
              { binding: 0, buffer: 'a' },
              { binding: 1, buffer: 'b' },
              { binding: 2, buffer: 'c' },
            ],
            workgroups: [2],
          });
          await local.run([{ kernel }]);
          return new Float32Array(await local.read('c'));
        }),
      );
      expect(first.device).not.toBe(second.device);
      results.forEach((c, d) => expect(c).toEqual(Float32Array.from({ length: n }, (_, i) => i + d + 1)));
    } finally {
      for (const local of executors) local.destroy();
      first.close();
      second.close();
    }
  });
});
