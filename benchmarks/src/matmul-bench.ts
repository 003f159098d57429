/**
 * The subgroup-matrix (tensor-core) GEMM on the device: which features, toggles and matrix configs
 * the adapter gave, the strategy chosen, numerics of f16 → f32 GEMMs against the CPU (exact on
 * small-integer data; random data with a K-scaled tolerance), then TFLOP/s at 4096³ and 8192³ next
 * to the SIMT f32 kernel. Writes matmul.json into --out (or $OUT).
 *
 *   node dist/matmul.mjs [--quick] [--checks-only] [--out DIR] [--target simt|subgroup-matrix] [--block 128x128x32] [--subgroups 2x4]
 *
 * Tile by tile (issue 19): `--tiles 128x128x64:4x2,128x256x16 --sizes 4096,8192,4000x3000x1000`
 * checks each tile exactly on small shapes, then times the emitted kernel at each size on uniform
 * random inputs, warmed by time (gemm-sweep's settledTimes: the H100 idles to 345 MHz in host gaps),
 * and checks that timed kernel's own output on sampled rows against an f64 CPU reference. With
 * `--dtype f32` the same for the SIMT f32 kernel (`--tiles 128x128x8,128x128x16`).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { compileOrThrow, FusedSession, gemmKernel, lowerToWgsl, openDevice, WARMUP_BUSY_MS, warmUntilSettled } from '@syncopate/core';
import { chooseMatmulStrategy, type CodegenOptions } from '@syncopate/backends';
import type { DeviceHandle } from '@syncopate/runtime';
import { settledTimes } from './gemm-sweep.js';
import { summarize } from './stats.js';

interface Block {
  readonly m: number;
  readonly n: number;
  readonly k: number;
}

function fusedGemm(size: { m: number; n: number; k: number }, block: Block, dtype: 'f16' | 'f32', options: CodegenOptions) {
  const kernel = gemmKernel({ ...size, blockM: block.m, blockN: block.n, blockK: block.k, dtype }, { name: 'gemm' });
  return { kernel, fused: lowerToWgsl(compileOrThrow(kernel, { ranks: 1, chunks: [] }), options) };
}

/** Deterministic data: small integers (exact in f16, and every partial sum exact in f32), or uniform in [-1, 1) rounded to f16. */
function data(n: number, seed: number, integers: boolean): Float32Array {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (s * 1664525 + 1013904223) >>> 0;
    out[i] = integers ? (s >>> 29) - 4 : Math.fround(((s >>> 8) / (1 << 24)) * 2 - 1);
  }
  return integers ? out : roundF16(out);
}

function roundF16(x: Float32Array): Float32Array {
  // Round to the nearest f16 value (normal range) the way the GPU stores the upload: 11 significant bits.
  return x.map((v) => {
    if (v === 0) return 0;
    const e = Math.floor(Math.log2(Math.abs(v)));
    const q = 2 ** (e - 10);
    return Math.round(v / q) * q;
  });
}

function reference(a: Float32Array, b: Float32Array, m: number, n: number, k: number): Float64Array {
  const c = new Float64Array(m * n);
  for (let i = 0; i < m; i++) for (let p = 0; p < k; p++) {
    const x = a[i * k + p]!;
    if (x === 0) continue;
    for (let j = 0; j < n; j++) c[i * n + j] = c[i * n + j]! + x * b[p * n + j]!;
  }
  return c;
}

async function check(device: DeviceHandle, size: { m: number; n: number; k: number }, block: Block, options: CodegenOptions, integers: boolean, dtype: 'f16' | 'f32' = 'f16') {
  const { fused } = fusedGemm(size, block, dtype, options);
  const A = data(size.m * size.k, 1, integers);
  const B = data(size.k * size.n, 2, integers);
  const session = await FusedSession.open(device, fused, { A: [A], B: [B], C: [new Float32Array(size.m * size.n).fill(Number.NaN)] }, { read: ['C'] });
  try {
    await session.run();
    const [C] = await session.read('C');
    const want = reference(A, B, size.m, size.n, size.k);
    let maxAbsError = 0;
    for (let i = 0; i < want.length; i++) maxAbsError = Math.max(maxAbsError, Number.isNaN(C![i]!) ? Infinity : Math.abs(C![i]! - want[i]!));
    // f32 accumulation of K products of values in [-1, 1]: a few ulps of sqrt(K)-sized sums.
    const tolerance = integers ? 0 : 1e-5 * size.k;
    return { ...size, data: integers ? 'integers' : 'uniform', maxAbsError, tolerance, ok: maxAbsError <= tolerance };
  } finally {
    session.destroy();
  }
}

async function speed(device: DeviceHandle, n: number, block: Block, dtype: 'f16' | 'f32', options: CodegenOptions, runs: number) {
  const { fused } = fusedGemm({ m: n, n, k: n }, block, dtype, options);
  // Uniform random inputs like the cuBLAS peer's randn, not zeros (tensor cores draw less power on zeros).
  const session = await FusedSession.open(device, fused, { A: [data(n * n, 1, false)], B: [data(n * n, 2, false)], C: [new Float32Array(n * n)] });
  try {
    // A first sweep with 5 fixed warm-up runs measured 12.7 TFLOP/s where the settled kernel does 41.
    await warmUntilSettled(async () => {
      const w = await session.runBackToBack(runs);
      return w.gpuMs ?? [w.wallMs / runs];
    }, WARMUP_BUSY_MS);
    const r = await session.runBackToBack(runs);
    const ms = summarize(r.gpuMs ?? [r.wallMs / runs]);
    return { size: n, dtype, block, target: options.target ?? 'simt', ms, timing: r.timing, tflops: (2 * n ** 3) / (ms.median * 1e-3) / 1e12 };
  } finally {
    session.destroy();
  }
}

interface Size {
  readonly m: number;
  readonly n: number;
  readonly k: number;
}

/** Rows of C checked after timing: first, last and three between. */
function sampledRows(m: number): number[] {
  return [...new Set([0, Math.floor(m / 3), Math.floor(m / 2), Math.floor((2 * m) / 3), m - 1])];
}

/** The largest error of `c` on `rows` against an f64 reference of A·B there. */
function sampledError(c: Float32Array, a: Float32Array, b: Float32Array, size: Size, rows: readonly number[]): number {
  let worst = 0;
  const want = new Float64Array(size.n);
  for (const i of rows) {
    want.fill(0);
    for (let p = 0; p < size.k; p++) {
      const x = a[i * size.k + p]!;
      for (let j = 0; j < size.n; j++) want[j] = want[j]! + x * b[p * size.n + j]!;
    }
    for (let j = 0; j < size.n; j++) worst = Math.max(worst, Number.isNaN(c[i * size.n + j]!) ? Infinity : Math.abs(c[i * size.n + j]! - want[j]!));
  }
  return worst;
}

/** One tile at one size: the emitted kernel timed at settled clocks, then its own output checked on sampled rows. */
async function timedAndChecked(device: DeviceHandle, size: Size, block: Block, options: CodegenOptions, A: Float32Array, B: Float32Array, dtype: 'f16' | 'f32') {
  const { fused } = fusedGemm(size, block, dtype, options);
  const session = await FusedSession.open(device, fused, { A: [A], B: [B], C: [new Float32Array(size.m * size.n).fill(Number.NaN)] }, { read: ['C'] });
  try {
    const ms = await settledTimes(async (runs) => {
      const r = await session.runBackToBack(runs);
      return r.gpuMs ?? [r.wallMs / runs];
    });
    const [C] = await session.read('C');
    const rows = sampledRows(size.m);
    const maxAbsError = sampledError(C!, A, B, size, rows);
    const tolerance = 1e-5 * size.k;
    return { ...size, dtype, block, target: options.target, views: fused.views?.map((v) => v.tensor) ?? [], ms, tflops: (2 * size.m * size.n * size.k) / (ms.median * 1e-3) / 1e12, checkedRows: rows, maxAbsError, tolerance, ok: maxAbsError <= tolerance };
  } finally {
    session.destroy();
  }
}

/**
 * Each tile (`BMxBNxBK[:SMxSN]`) exact on small shapes, then timed and checked at each size: f16 → f32
 * on subgroup matrices where the adapter has them, or f32 on the SIMT kernel (`dtype` f32).
 */
export async function matmulTiles(tiles: readonly { block: Block; subgroups?: readonly [number, number] }[], sizes: readonly Size[], dtype: 'f16' | 'f32' = 'f16') {
  const device = await openDevice();
  try {
    const strategy = chooseMatmulStrategy(device.features, device.subgroupMatrixConfigs, { input: 'f16', accumulate: 'f32' }, device.subgroupMaxSize);
    // SIMT where the adapter has no subgroup matrices (so the bench itself runs on lavapipe).
    const target = strategy.kind === 'subgroup-matrix' && dtype === 'f16' ? { ...strategy.target, workgroupBytes: device.device.limits.maxComputeWorkgroupStorageSize } : undefined;
    const optionsOf = (t: (typeof tiles)[number]): CodegenOptions => ({ target: target ? { ...target, ...(t.subgroups && { subgroups: t.subgroups }) } : 'simt' });
    const name = (t: (typeof tiles)[number]) => `${t.block.m}x${t.block.n}x${t.block.k}${t.subgroups ? ` sg${t.subgroups.join('x')}` : ''}`;
    const checks = [];
    for (const t of tiles) {
      for (const size of [{ m: 256, n: 256, k: 256 }, { m: 200, n: 136, k: 80 }, { m: 1000, n: 520, k: 328 }]) {
        const c = await check(device, size, t.block, optionsOf(t), true, dtype);
        console.log(`check ${name(t)} ${c.m}x${c.n}x${c.k} integers: maxAbsError ${c.maxAbsError} ${c.ok ? 'ok' : 'FAIL'}`);
        checks.push({ tile: name(t), ...c });
      }
    }
    const timings = [];
    for (const size of sizes) {
      const A = data(size.m * size.k, 1, false);
      const B = data(size.k * size.n, 2, false);
      for (const t of tiles) {
        const r = await timedAndChecked(device, size, t.block, optionsOf(t), A, B, dtype);
        console.log(`gemm ${size.m}x${size.n}x${size.k} ${dtype === 'f16' ? 'f16->f32' : 'f32 simt'} ${name(t)} (vec4 views: ${r.views.join(',') || 'none'}): ${r.ms.median.toFixed(3)} ms, ${r.tflops.toFixed(1)} TFLOP/s; sampled rows maxAbsError ${r.maxAbsError.toExponential(2)} (tolerance ${r.tolerance}) ${r.ok ? 'ok' : 'FAIL'}`);
        timings.push({ tile: name(t), ...r });
      }
    }
    return { adapter: { ...device.adapterInfo, toggles: device.toggles }, target: target ?? 'simt', checks, timings };
  } finally {
    device.close();
  }
}

export async function matmulBench(args: { quick?: boolean; checksOnly?: boolean; target?: 'simt' | 'subgroup-matrix'; block?: Block; subgroups?: readonly [number, number] } = {}) {
  const device = await openDevice();
  try {
    const strategy = chooseMatmulStrategy(device.features, device.subgroupMatrixConfigs, { input: 'f16', accumulate: 'f32' }, device.subgroupMaxSize);
    const adapter = { ...device.adapterInfo, features: device.features, toggles: device.toggles, subgroupMatrixConfigs: device.subgroupMatrixConfigs, subgroupMaxSize: device.subgroupMaxSize };
    console.log(JSON.stringify({ adapter, strategy }, null, 1));
    // The subgroup-matrix default is the tile that ran fastest at 4096³ and 8192³ on the H100
    // (128x128x64, 4x2 subgroups: benchmarks/gemm.md, "The port").
    const subgroups = args.subgroups ?? (args.block ? undefined : ([4, 2] as const));
    const options: CodegenOptions =
      args.target === 'simt' || strategy.kind !== 'subgroup-matrix' ? { target: 'simt' } : { target: { ...strategy.target, ...(subgroups && { subgroups }) } };
    const block = args.block ?? (options.target === 'simt' ? { m: 64, n: 64, k: 32 } : { m: 128, n: 128, k: 64 });
    const checks = [];
    for (const [size, integers] of [
      [{ m: 256, n: 256, k: 256 }, true],
      [{ m: 200, n: 136, k: 80 }, true],
      [{ m: 1000, n: 520, k: 328 }, true],
      [{ m: 512, n: 512, k: 1024 }, false],
    ] as const) {
      const c = await check(device, size, block, options, integers);
      console.log(`check ${c.m}x${c.n}x${c.k} ${c.data}: maxAbsError ${c.maxAbsError} (tolerance ${c.tolerance}) ${c.ok ? 'ok' : 'FAIL'}`);
      checks.push(c);
    }
    const timings = [];
    for (const n of args.checksOnly ? [] : args.quick ? [4096] : [4096, 8192]) {
      const s = await speed(device, n, block, 'f16', options, args.quick ? 10 : 30);
      console.log(`gemm ${n}^3 f16->f32 ${JSON.stringify(s.target)} block ${block.m}x${block.n}x${block.k}: ${s.ms.median.toFixed(3)} ms, ${s.tflops.toFixed(1)} TFLOP/s (${s.timing})`);
      timings.push(s);
    }
    if (!args.quick && !args.checksOnly) {
      const s = await speed(device, 4096, { m: 64, n: 64, k: 32 }, 'f32', {}, 10);
      console.log(`gemm 4096^3 f32 simt 64x64x32: ${s.ms.median.toFixed(3)} ms, ${s.tflops.toFixed(1)} TFLOP/s`);
      timings.push(s);
    }
    return { adapter, strategy, options, checks, timings };
  } finally {
    device.close();
  }
}

const isMain = process.argv[1] !== undefined && /matmul(-bench)?\.(m?js|ts)$/.test(process.argv[1]);
if (isMain) {
  const { values } = parseArgs({
    options: { quick: { type: 'boolean' }, 'checks-only': { type: 'boolean' }, out: { type: 'string' }, target: { type: 'string' }, block: { type: 'string' }, subgroups: { type: 'string' }, tiles: { type: 'string' }, sizes: { type: 'string' }, dtype: { type: 'string' }, 'print-wgsl': { type: 'string' } },
  });
  if (values['print-wgsl']) {
    // The emitted kernel's WGSL at SIZE³ for --block/--subgroups under the H100's 16x16x16 f16 → f32
    // matrices (no device needed): what the device ran, to read beside gemm-sweep --print.
    const n = Number(values['print-wgsl']);
    const [m, nn, k] = (values.block ?? '128x128x64').split('x').map(Number);
    const sg = values.subgroups?.split('x').map(Number) ?? [4, 2];
    const config = { componentType: 'f16', resultComponentType: 'f32', M: 16, N: 16, K: 16 } as const;
    const { fused } = fusedGemm({ m: n, n, k: n }, { m: m!, n: nn!, k: k! }, 'f16', { target: { config, subgroupSize: 32, workgroupBytes: 49152, subgroups: [sg[0]!, sg[1]!] } });
    console.log(fused.wgsl);
    process.exit();
  }
  if (values.tiles) {
    const tiles = values.tiles.split(',').map((t) => {
      const [b, g] = t.split(':');
      const [m, n, k] = b!.split('x').map(Number);
      const sg = g?.split('x').map(Number);
      return { block: { m: m!, n: n!, k: k! }, ...(sg && { subgroups: [sg[0]!, sg[1]!] as const }) };
    });
    const sizes = (values.sizes ?? '4096').split(',').map((x) => {
      const [m, n, k] = x.includes('x') ? x.split('x').map(Number) : [Number(x), Number(x), Number(x)];
      return { m: m!, n: n!, k: k! };
    });
    const result = await matmulTiles(tiles, sizes, values.dtype === 'f32' ? 'f32' : 'f16');
    const out = values.out ?? process.env['OUT'];
    if (out) {
      mkdirSync(out, { recursive: true });
      writeFileSync(join(out, 'matmul-tiles.json'), JSON.stringify(result, null, 1));
    }
    if (result.checks.some((c) => !c.ok) || result.timings.some((t) => !t.ok)) process.exitCode = 1;
    process.exit();
  }
  const block = values.block?.split('x').map(Number);
  const subgroups = values.subgroups?.split('x').map(Number);
  const result = await matmulBench({
    ...(values.quick && { quick: true }),
    ...(values['checks-only'] && { checksOnly: true }),
    ...(values.target && { target: values.target as 'simt' | 'subgroup-matrix' }),
    ...(block && { block: { m: block[0]!, n: block[1]!, k: block[2]! } }),
    ...(subgroups && { subgroups: [subgroups[0]!, subgroups[1]!] as const }),
  });
  const out = values.out ?? process.env['OUT'];
  if (out) {
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'matmul.json'), JSON.stringify(result, null, 1));
  }
  if (result.checks.some((c) => !c.ok)) process.exitCode = 1;
}
