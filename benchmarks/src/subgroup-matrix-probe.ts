/**
 * Probes of Dawn's subgroup-matrix builtins, one small WGSL kernel each, checked against the CPU:
 * which of the operations the GEMM kernel is built from (matrix loads and stores from storage and
 * from workgroup memory, padded strides, `@builtin(subgroup_id)`, workgroup barriers in a module
 * that uses matrices) give right results on the adapter. Written to find where the staged
 * subgroup-matrix GEMM went wrong on the H100; kept to check a new driver or Dawn the same way.
 * Then the emitted GEMM kernel itself at 256³ (64x64 and 128x128 tiles), with a map of where it is
 * wrong. The rewrites of the kernel's text that bisected the fault are in the commit that fixed it
 * (2e40469); results in benchmarks/results/h100-2026-11-23/subgroup-matrix-v3/.
 *
 * Probes marked `known` are wrong on NVIDIA's driver 580 (a lone u32 workgroup variable beside the
 * staged arrays makes matrix loads from them read zeros): the emitters avoid that pattern
 * (wgsl/writer.ts, wholeWords). They are reported as KNOWN while still wrong and as FIXED once right.
 *
 *   node dist/probe.mjs [--out DIR]     writes probe.json; exit code 1 if a probe not marked known is wrong
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { compileOrThrow, FusedSession, gemmKernel, lowerToWgsl, openDevice, toHalfBits } from '@syncopate/core';
import type { DeviceHandle } from '@syncopate/runtime';

/** The probes' matrices are SIZE x SIZE row-major. */
const SIZE = 64;

/** `n` small integers in [-4, 3] (exact in f16 and in every f32 sum), from a seeded LCG. */
function integers(seed: number, n = SIZE * SIZE): Float32Array {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < out.length; i++) {
    s = (s * 1664525 + 1013904223) >>> 0;
    out[i] = (s >>> 29) - 4;
  }
  return out;
}

const A = integers(1);
const B = integers(2);
const X = integers(3);

/** C[r][c] = Σ_k A[r][k]·B[k][c] over the block rows × cols × depth at the origin. */
function product(rows: number, cols: number, depth: number): Float32Array {
  const c = new Float32Array(SIZE * SIZE);
  for (let r = 0; r < rows; r++)
    for (let j = 0; j < cols; j++) {
      let s = 0;
      for (let k = 0; k < depth; k++) s += A[r * SIZE + k]! * B[k * SIZE + j]!;
      c[r * SIZE + j] = s;
    }
  return c;
}

function block(rows: number, cols: number, from: Float32Array): Float32Array {
  const c = new Float32Array(SIZE * SIZE);
  for (let r = 0; r < rows; r++) for (let j = 0; j < cols; j++) c[r * SIZE + j] = from[r * SIZE + j]!;
  return c;
}

const HEADER = `enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;
alias L = subgroup_matrix_left<f16, 16, 16>;
alias R = subgroup_matrix_right<f16, 16, 16>;
alias C = subgroup_matrix_result<f32, 16, 16>;
@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read> b: array<f16>;
@group(0) @binding(2) var<storage, read> x: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
`;

interface Probe {
  readonly name: string;
  readonly what: string;
  readonly workgroupSize: number;
  readonly body: string;
  readonly decls?: string;
  readonly want: Float32Array;
  /** Where this probe is known to be wrong, and why it does not matter to the kernels. */
  readonly known?: string;
}

/** A [16x64] · B [64x16], one subgroup, with A and B staged in workgroup memory (row strides `sa`, `sb`) by elements or by matrices. */
function workgroupMma(name: string, what: string, sa: number, sb: number, staging: 'elements' | 'matrices'): Probe {
  const stage =
    staging === 'elements'
      ? `for (var e = lid; e < 1024u; e += 32u) { sa[(e / 64u) * ${sa}u + e % 64u] = a[(e / 64u) * 64u + e % 64u]; sb[(e / 16u) * ${sb}u + e % 16u] = b[(e / 16u) * 64u + e % 16u]; }`
      : `for (var k = 0u; k < 64u; k += 16u) {
    subgroupMatrixStore<row_major>(&sa, k, subgroupMatrixLoad<L, row_major>(&a, k, 64u), ${sa}u);
    subgroupMatrixStore<row_major>(&sb, k * ${sb}u, subgroupMatrixLoad<R, row_major>(&b, k * 64u, 64u), ${sb}u);
  }`;
  return {
    name,
    what,
    workgroupSize: 32,
    decls: `var<workgroup> sa: array<f16, ${16 * sa}>;\nvar<workgroup> sb: array<f16, ${64 * sb}>;`,
    body: `${stage}
  workgroupBarrier();
  var acc: C;
  for (var k = 0u; k < 64u; k += 16u) {
    acc = subgroupMatrixMultiplyAccumulate(subgroupMatrixLoad<L, row_major>(&sa, k, ${sa}u), subgroupMatrixLoad<R, row_major>(&sb, k * ${sb}u, ${sb}u), acc);
  }
  subgroupMatrixStore<row_major>(&out, 0u, acc, 64u);`,
    want: product(16, 16, 64),
  };
}

/** The staged K loop (8 subgroups, A and B staged 16 deep with barriers around), with `prefix` first and `decls` beside it. */
function stagedLoop(name: string, what: string, decls: string, prefix: string, rowOffset = '', known?: string): Probe {
  return {
    ...(known && { known }),
    name,
    what,
    workgroupSize: 256,
    decls: `var<workgroup> sa: array<f16, 1536>;\nvar<workgroup> sb: array<f16, 1152>;\n${decls}`,
    body: `${prefix}
  let row = (sg_id / 2u) * 16u${rowOffset};
  let col = (sg_id % 2u) * 32u;
  var acc: array<C, 2>;
  for (var k = 0u; k < 64u; k += 16u) {
    workgroupBarrier();
    for (var e = lid; e < 1024u; e += 256u) {
      sa[(e / 16u) * 24u + e % 16u] = a[(e / 16u) * 64u + k + e % 16u];
      sb[(e / 64u) * 72u + e % 64u] = b[(k + e / 64u) * 64u + e % 64u];
    }
    workgroupBarrier();
    let l = subgroupMatrixLoad<L, row_major>(&sa, row * 24u, 24u);
    acc[0] = subgroupMatrixMultiplyAccumulate(l, subgroupMatrixLoad<R, row_major>(&sb, col, 72u), acc[0]);
    acc[1] = subgroupMatrixMultiplyAccumulate(l, subgroupMatrixLoad<R, row_major>(&sb, col + 16u, 72u), acc[1]);
  }
  subgroupMatrixStore<row_major>(&out, row * 64u + col, acc[0], 64u);
  subgroupMatrixStore<row_major>(&out, row * 64u + col + 16u, acc[1], 64u);`,
    want: product(64, 64, 64),
  };
}

const LONE_U32 = 'NVIDIA 580: a workgroup variable that is not a whole number of 16-byte words puts matrix loads from the arrays beside it off';

function stagedLoopVariants(): Probe[] {
  return [
    stagedLoop(
      'staged-loop+workgroup-u32',
      'the staged K loop with a u32 workgroup variable read by workgroupUniformLoad beside the f16 arrays',
      'var<workgroup> wg_u: u32;',
      `if (lid == 0u) { wg_u = u32(x[0] * 0.0); }
  let t = workgroupUniformLoad(&wg_u);`,
      ' + t',
      LONE_U32,
    ),
    stagedLoop(
      'staged-loop+workgroup-words',
      'as staged-loop+workgroup-u32 with the u32 in a 16-byte struct, as the emitters declare it',
      'struct Words { u: u32, pending_count: u32, unused: vec2<u32> }\nvar<workgroup> wg: Words;',
      `if (lid == 0u) { wg.u = u32(x[0] * 0.0); }
  let t = workgroupUniformLoad(&wg.u);`,
      ' + t',
    ),
    stagedLoop('staged-loop+early-return', 'the staged K loop after a uniform early return (never taken)', '', 'if (x[1] > 1e30) { return; }'),
    stagedLoop(
      'staged-loop+f32-matrix-spill',
      'the staged K loop beside an f32 workgroup array that a result matrix is stored into',
      'var<workgroup> spill: array<f32, 2048>;',
      `if (x[2] > 1e30) { var z: C; subgroupMatrixStore<row_major>(&spill, sg_id * 256u, z, 16u); workgroupBarrier(); out[lid] = spill[lid]; }`,
    ),
    stagedLoop(
      'staged-loop+u32-array',
      'the staged K loop beside a u32 workgroup array written by invocation 0',
      'var<workgroup> pending: array<u32, 2>;\nvar<workgroup> pending_count: u32;',
      `if (lid == 0u) { pending_count = 0u; pending[pending_count] = 1u; pending_count += 1u; }
  workgroupBarrier();
  let pc = workgroupUniformLoad(&pending_count);`,
      ' + (pc - 1u)',
      LONE_U32,
    ),
  ];
}

const probes: Probe[] = [
  {
    name: 'result-global',
    what: 'result matrix loaded from storage and stored to storage (stride 64)',
    workgroupSize: 32,
    body: `let r = subgroupMatrixLoad<C, row_major>(&x, 0u, 64u);
  subgroupMatrixStore<row_major>(&out, 0u, r, 64u);`,
    want: block(16, 16, X),
  },
  {
    name: 'mma-global',
    what: 'A·B over K=64 with operands from storage, zero-initialised accumulator',
    workgroupSize: 32,
    body: `var acc: C;
  for (var k = 0u; k < 64u; k += 16u) {
    let l = subgroupMatrixLoad<L, row_major>(&a, k, 64u);
    let r = subgroupMatrixLoad<R, row_major>(&b, k * 64u, 64u);
    acc = subgroupMatrixMultiplyAccumulate(l, r, acc);
  }
  subgroupMatrixStore<row_major>(&out, 0u, acc, 64u);`,
    want: product(16, 16, 64),
  },
  {
    name: 'mma-global-acc-array',
    what: 'as mma-global with a zero-initialised array of accumulators, constant indices, and 2 blocks',
    workgroupSize: 32,
    body: `var acc: array<C, 2>;
  for (var k = 0u; k < 64u; k += 16u) {
    let l = subgroupMatrixLoad<L, row_major>(&a, k, 64u);
    acc[0] = subgroupMatrixMultiplyAccumulate(l, subgroupMatrixLoad<R, row_major>(&b, k * 64u, 64u), acc[0]);
    acc[1] = subgroupMatrixMultiplyAccumulate(l, subgroupMatrixLoad<R, row_major>(&b, k * 64u + 16u, 64u), acc[1]);
  }
  subgroupMatrixStore<row_major>(&out, 0u, acc[0], 64u);
  subgroupMatrixStore<row_major>(&out, 16u, acc[1], 64u);`,
    want: product(16, 32, 64),
  },
  {
    name: 'result-to-workgroup',
    what: 'result matrix stored into workgroup memory (stride 16), read back element by element',
    workgroupSize: 32,
    decls: 'var<workgroup> s: array<f32, 256>;',
    body: `let r = subgroupMatrixLoad<C, row_major>(&x, 0u, 64u);
  subgroupMatrixStore<row_major>(&s, 0u, r, 16u);
  workgroupBarrier();
  for (var e = lid; e < 256u; e += 32u) { out[(e / 16u) * 64u + e % 16u] = s[e]; }`,
    want: block(16, 16, X),
  },
  {
    name: 'result-to-workgroup-padded',
    what: 'as result-to-workgroup with stride 20 (80 bytes)',
    workgroupSize: 32,
    decls: 'var<workgroup> s: array<f32, 320>;',
    body: `let r = subgroupMatrixLoad<C, row_major>(&x, 0u, 64u);
  subgroupMatrixStore<row_major>(&s, 0u, r, 20u);
  workgroupBarrier();
  for (var e = lid; e < 256u; e += 32u) { out[(e / 16u) * 64u + e % 16u] = s[(e / 16u) * 20u + e % 16u]; }`,
    want: block(16, 16, X),
  },
  {
    name: 'workgroup-to-result',
    what: 'elements written into workgroup memory, loaded as a result matrix, stored to storage',
    workgroupSize: 32,
    decls: 'var<workgroup> s: array<f32, 256>;',
    body: `for (var e = lid; e < 256u; e += 32u) { s[e] = x[(e / 16u) * 64u + e % 16u]; }
  workgroupBarrier();
  let r = subgroupMatrixLoad<C, row_major>(&s, 0u, 16u);
  subgroupMatrixStore<row_major>(&out, 0u, r, 64u);`,
    want: block(16, 16, X),
  },
  workgroupMma('mma-workgroup', 'A [16x64] and B [64x16] staged element by element (strides 64, 16), MMA operands from workgroup memory', 64, 16, 'elements'),
  workgroupMma('mma-workgroup-padded', 'as mma-workgroup with rows padded by 8 (strides 72, 24)', 72, 24, 'elements'),
  workgroupMma('mma-workgroup-matrix-staged', 'A and B copied into workgroup memory by matrix loads from storage and matrix stores (strides 72, 24)', 72, 24, 'matrices'),
  {
    name: 'subgroup-id',
    what: '@builtin(subgroup_id) against local_invocation_index / 32 in a workgroup of 256',
    workgroupSize: 256,
    body: `out[lid] = f32(sg_id) - f32(lid / 32u);
  out[256u + lid] = f32(sg_size);`,
    want: (() => {
      const w = new Float32Array(SIZE * SIZE);
      w.fill(32, 256, 512);
      return w;
    })(),
  },
  {
    name: 'mma-8-subgroups-global',
    what: '8 subgroups (256 invocations), each two 16x16 blocks of the 64x64 product from storage, offsets from subgroup_id',
    workgroupSize: 256,
    body: `let row = (sg_id / 2u) * 16u;
  let col = (sg_id % 2u) * 32u;
  var acc: array<C, 2>;
  for (var k = 0u; k < 64u; k += 16u) {
    let l = subgroupMatrixLoad<L, row_major>(&a, row * 64u + k, 64u);
    acc[0] = subgroupMatrixMultiplyAccumulate(l, subgroupMatrixLoad<R, row_major>(&b, k * 64u + col, 64u), acc[0]);
    acc[1] = subgroupMatrixMultiplyAccumulate(l, subgroupMatrixLoad<R, row_major>(&b, k * 64u + col + 16u, 64u), acc[1]);
  }
  subgroupMatrixStore<row_major>(&out, row * 64u + col, acc[0], 64u);
  subgroupMatrixStore<row_major>(&out, row * 64u + col + 16u, acc[1], 64u);`,
    want: product(64, 64, 64),
  },
  {
    name: 'mma-8-subgroups-workgroup',
    what: 'as mma-8-subgroups-global with all of A and B staged element by element (padded strides 72)',
    workgroupSize: 256,
    decls: 'var<workgroup> sa: array<f16, 4608>;\nvar<workgroup> sb: array<f16, 4608>;',
    body: `for (var e = lid; e < 4096u; e += 256u) { sa[(e / 64u) * 72u + e % 64u] = a[e]; sb[(e / 64u) * 72u + e % 64u] = b[e]; }
  workgroupBarrier();
  let row = (sg_id / 2u) * 16u;
  let col = (sg_id % 2u) * 32u;
  var acc: array<C, 2>;
  for (var k = 0u; k < 64u; k += 16u) {
    let l = subgroupMatrixLoad<L, row_major>(&sa, row * 72u + k, 72u);
    acc[0] = subgroupMatrixMultiplyAccumulate(l, subgroupMatrixLoad<R, row_major>(&sb, k * 72u + col, 72u), acc[0]);
    acc[1] = subgroupMatrixMultiplyAccumulate(l, subgroupMatrixLoad<R, row_major>(&sb, k * 72u + col + 16u, 72u), acc[1]);
  }
  subgroupMatrixStore<row_major>(&out, row * 64u + col, acc[0], 64u);
  subgroupMatrixStore<row_major>(&out, row * 64u + col + 16u, acc[1], 64u);`,
    want: product(64, 64, 64),
  },
  stagedLoop(
    'mma-8-subgroups-staged-k-loop',
    'as mma-8-subgroups-workgroup, but A and B staged 16 columns/rows of K at a time with a barrier before and after each step (the GEMM loop)',
    '',
    '',
  ),
  ...stagedLoopVariants(),
  {
    name: 'barrier-exchange',
    what: 'workgroup memory exchanged across subgroups through barriers, 16 rounds, in a module that uses matrices',
    workgroupSize: 256,
    decls: 'var<workgroup> s: array<f32, 256>;',
    body: `var total = 0.0;
  for (var round = 0u; round < 16u; round++) {
    workgroupBarrier();
    s[lid] = x[round * 256u + lid];
    workgroupBarrier();
    total += s[(lid + 37u) % 256u];
  }
  out[lid] = total;
  if (lid == 0u) { out[300u] = f32(sg_id); }
  var unused: C;
  if (x[0] > 1e30) { subgroupMatrixStore<row_major>(&out, 512u, unused, 16u); }`,
    want: (() => {
      const w = new Float32Array(SIZE * SIZE);
      for (let lid = 0; lid < 256; lid++) {
        let t = 0;
        for (let round = 0; round < 16; round++) t += X[round * 256 + ((lid + 37) % 256)]!;
        w[lid] = t;
      }
      return w;
    })(),
  },
];

interface ProbeResult {
  readonly name: string;
  readonly what: string;
  readonly ok: boolean;
  readonly known?: string;
  readonly maxAbsError?: number;
  readonly wrong?: number;
  readonly firstWrong?: { index: number; got: number; want: number };
  readonly error?: string;
}

async function runProbe(device: GPUDevice, probe: Probe, inputs: { a: GPUBuffer; b: GPUBuffer; x: GPUBuffer }): Promise<ProbeResult> {
  const code = `${HEADER}${probe.decls ?? ''}
@compute @workgroup_size(${probe.workgroupSize})
fn main(@builtin(local_invocation_index) lid: u32, @builtin(subgroup_id) sg_id: u32, @builtin(subgroup_size) sg_size: u32) {
  ${probe.body}
}
`;
  device.pushErrorScope('validation');
  const module = device.createShaderModule({ code });
  const info = await module.getCompilationInfo();
  const messages = info.messages.filter((m) => m.type === 'error').map((m) => `${m.lineNum}:${m.linePos} ${m.message}`);
  const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
  const bytes = SIZE * SIZE * 4;
  const out = device.createBuffer({ size: bytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
  const readback = device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  try {
    const layout = pipeline.getBindGroupLayout(0);
    // Only the bindings the probe uses are in its layout: try each.
    const entries = [
      { binding: 0, resource: { buffer: inputs.a } },
      { binding: 1, resource: { buffer: inputs.b } },
      { binding: 2, resource: { buffer: inputs.x } },
      { binding: 3, resource: { buffer: out } },
    ].filter((e) => new RegExp(`&${['a', 'b', 'x', 'out'][e.binding]}\\b|\\b${['a', 'b', 'x', 'out'][e.binding]}\\[`).test(probe.body));
    const group = device.createBindGroup({ layout, entries });
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, group);
    pass.dispatchWorkgroups(1);
    pass.end();
    encoder.copyBufferToBuffer(out, 0, readback, 0, bytes);
    device.queue.submit([encoder.finish()]);
    const scope = await device.popErrorScope();
    if (scope || messages.length > 0) return { name: probe.name, what: probe.what, ok: false, error: [...messages, scope?.message ?? ''].join('; ') };
    await readback.mapAsync(GPUMapMode.READ);
    const got = new Float32Array(readback.getMappedRange().slice(0));
    readback.unmap();
    let maxAbsError = 0;
    let wrong = 0;
    let firstWrong: ProbeResult['firstWrong'];
    for (let i = 0; i < got.length; i++) {
      const e = Math.abs(got[i]! - probe.want[i]!);
      if (!(e === 0)) {
        wrong++;
        firstWrong ??= { index: i, got: got[i]!, want: probe.want[i]! };
        maxAbsError = Math.max(maxAbsError, Number.isNaN(e) ? Infinity : e);
      }
    }
    return { name: probe.name, what: probe.what, ok: wrong === 0, ...(probe.known && { known: probe.known }), maxAbsError, wrong, ...(firstWrong && { firstWrong }) };
  } finally {
    out.destroy();
    readback.destroy();
  }
}

function upload(device: GPUDevice, data: ArrayBufferView): GPUBuffer {
  const buffer = device.createBuffer({ size: Math.ceil(data.byteLength / 4) * 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
  device.queue.writeBuffer(buffer, 0, data.buffer, data.byteOffset, data.byteLength);
  return buffer;
}

interface KernelResult {
  readonly shape: string;
  readonly block: string;
  readonly ok: boolean;
  readonly wrong?: number;
  readonly maxAbsError?: number;
  /** Wrong elements per 16x16 block of a tile, by the block's row and column in the tile. */
  readonly wrongByBlock?: Record<string, number>;
  readonly samples?: { row: number; col: number; got: number; want: number }[];
  readonly error?: string;
}

async function runKernel(device: DeviceHandle, size: number, block: number): Promise<KernelResult> {
  const kernel = gemmKernel({ m: size, n: size, k: size, blockM: block, blockN: block, blockK: 32, dtype: 'f16' }, { name: 'gemm' });
  const fused = lowerToWgsl(compileOrThrow(kernel, { ranks: 1, chunks: [] }), { target: 'subgroup-matrix' });
  const a = integers(1, size * size);
  const b = integers(2, size * size);
  const base = { shape: `${size}^3`, block: `${block}x${block}x32` };
  let session: FusedSession | undefined;
  try {
    session = await FusedSession.open(device, fused, { A: [a], B: [b], C: [new Float32Array(size * size).fill(Number.NaN)] }, { read: ['C'] });
    await session.run();
    const [c] = await session.read('C');
    let wrong = 0;
    let maxAbsError = 0;
    const wrongByBlock: Record<string, number> = {};
    const samples: { row: number; col: number; got: number; want: number }[] = [];
    for (let i = 0; i < size; i++)
      for (let j = 0; j < size; j++) {
        let want = 0;
        for (let p = 0; p < size; p++) want += a[i * size + p]! * b[p * size + j]!;
        const got = c![i * size + j]!;
        if (got === want) continue;
        wrong++;
        maxAbsError = Math.max(maxAbsError, Number.isNaN(got) ? Infinity : Math.abs(got - want));
        const key = `${Math.floor((i % block) / 16)},${Math.floor((j % block) / 16)}`;
        wrongByBlock[key] = (wrongByBlock[key] ?? 0) + 1;
        if (samples.length < 6) samples.push({ row: i, col: j, got, want });
      }
    return { ...base, ok: wrong === 0, wrong, maxAbsError, wrongByBlock, samples };
  } catch (e) {
    return { ...base, ok: false, error: (e as Error).message.slice(0, 400) };
  } finally {
    session?.destroy();
  }
}

export async function probeKernel(handle: DeviceHandle): Promise<KernelResult[]> {
  const results: KernelResult[] = [];
  for (const block of [64, 128]) {
    const r = await runKernel(handle, 256, block);
    console.log(`${r.ok ? 'ok  ' : 'FAIL'} gemm ${r.shape} block ${r.block}: ${r.error ?? `${r.wrong} wrong, max error ${r.maxAbsError}, by block ${JSON.stringify(r.wrongByBlock)}, samples ${JSON.stringify(r.samples)}`}`);
    results.push(r);
  }
  return results;
}

export async function probeSubgroupMatrices(): Promise<{ adapter: unknown; results: ProbeResult[]; kernel?: KernelResult[] }> {
  const handle = await openDevice();
  try {
    const adapter = { ...handle.adapterInfo, features: handle.features, toggles: handle.toggles };
    if (!handle.features.includes('chromium-experimental-subgroup-matrix')) return { adapter, results: [] };
    const device = handle.device;
    const inputs = { a: upload(device, toHalfBits(Float32Array.from(A))), b: upload(device, toHalfBits(Float32Array.from(B))), x: upload(device, X) };
    const results: ProbeResult[] = [];
    for (const probe of probes) {
      const r = await runProbe(device, probe, inputs);
      console.log(`${r.known ? (r.ok ? 'FIXED' : 'KNOWN') : r.ok ? 'ok  ' : 'FAIL'} ${r.name}: ${r.error ?? `${r.wrong} wrong of ${SIZE * SIZE}, max error ${r.maxAbsError}${r.firstWrong ? `, first at ${r.firstWrong.index}: ${r.firstWrong.got} (want ${r.firstWrong.want})` : ''}`}`);
      results.push(r);
    }
    return { adapter, results, kernel: await probeKernel(handle) };
  } finally {
    handle.close();
  }
}

const isMain = process.argv[1] !== undefined && /(subgroup-matrix-)?probe\.(m?js|ts)$/.test(process.argv[1]);
if (isMain) {
  const { values } = parseArgs({ options: { out: { type: 'string' } } });
  const result = await probeSubgroupMatrices();
  if (result.results.length === 0) console.log('the adapter has no chromium-experimental-subgroup-matrix: nothing to probe');
  const out = values.out ?? process.env['OUT'];
  if (out) {
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'probe.json'), JSON.stringify(result, null, 1));
  }
  if (result.results.some((r) => !r.ok && !r.known) || result.kernel?.some((r) => !r.ok)) process.exitCode = 1;
}
