/**
 * A sweep of hand-written subgroup-matrix GEMM kernels (f16 → f32, C = A·B, all row-major), to find
 * by measurement which structure reaches the tensor cores through Dawn's Vulkan path (issue 19):
 *
 *   direct   each subgroup loads its FM + FN matrices straight from storage every 16 of K (no
 *            workgroup memory, no barrier); KU steps unrolled.
 *   staged   the workgroup stages A [BM][BK+pad] and B [BK][BN+pad] through workgroup memory with
 *            16-byte (vec4<u32>) global loads; the next step's loads are issued into registers
 *            before this step's MMAs; two copies and one barrier a step where they fit in 48 KiB,
 *            else one copy and two barriers.
 *   ceiling  no memory traffic in the loop: FM×FN MMAs on matrices loaded once, as many as a 4096³
 *            GEMM does: the most subgroupMatrixMultiplyAccumulate gives through Dawn on this GPU.
 *
 * `prefetch: false` stages each step's words straight through (no registers live across the MMAs);
 * `depth`, `peel`, `interleave` and `stores` reshape the staged loop, and a `probe` leaves one part of
 * it out to see what that part costs (benchmarks/README.md, 2026-11-25 night).
 *
 * Every variant but the ceiling and the probes (which compute no product) is checked before timing:
 * exact on small integers (512×512×256), then the timed kernel itself at 4096³ on uniform [-1, 1)
 * f16 data, its output compared on sampled rows with a CPU reference. Tiles are walked in groups of 8 tile rows (L2 reuse of B) unless `swizzle` is off.
 *
 *   node dist/gemm-sweep.mjs [--set default|focus|next|occupancy|where|deep|occupancy-barrier|peel|interleave] [--only NAME,...] [--size 4096] [--repeat] [--out DIR]
 *                            writes gemm-sweep.json; --emulate [--exact 128x128x64]: checks on lavapipe;
 *                            --print SIZE: the WGSL of the first selected variant for SIZE³
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openDevice, toHalfBits, WARMUP_BUSY_MS, warmUntilSettled } from '@syncopate/core';
import { summarize } from './stats.js';

export interface Variant {
  readonly kind: 'direct' | 'staged' | 'ceiling';
  /** Subgroups along rows and columns; 16×16 matrices per subgroup along rows and columns. */
  readonly sm: number;
  readonly sn: number;
  readonly fm: number;
  readonly fn: number;
  /** staged: K step and row pad (halves); direct: K steps of 16 unrolled per loop trip. */
  readonly bk?: number;
  readonly pad?: number;
  readonly ku?: number;
  readonly swizzle?: boolean;
  /** staged: false loads each step's words after the barrier and stores them at once (no registers live across the MMAs). */
  readonly prefetch?: boolean;
  /**
   * staged: `rotated` writes each word's four 32-bit parts starting at part (lane / 8) mod 4, so the
   * 2-byte stores of one instruction fall in different banks (in order, the lanes of a warp write
   * 16 bytes apart: a 4-way conflict per store).
   */
  readonly stores?: 'rotated';
  /**
   * staged, a probe of where the time goes (not a GEMM: unchecked): `no-put` stores no step after the
   * first into workgroup memory, `no-fetch` loads no step after the first from storage, `no-load`
   * loads the workgroup matrices once, before the loop.
   */
  readonly probe?: 'no-put' | 'no-fetch' | 'no-load' | 'no-barrier';
  /** staged: 2 fetches the words two steps ahead into two register sets (the loop unrolled by two). */
  readonly depth?: 2;
  /** staged: the last step peeled off the loop, so no step's fetch or store sits behind a branch. */
  readonly peel?: boolean;
  /** staged, peeled: the next substep's matrix loads before this one's MMAs, the next step's stores among the second half of them (two copies). */
  readonly interleave?: boolean;
}

const tileOf = (v: Variant) => ({ bm: v.sm * v.fm * 16, bn: v.sn * v.fn * 16 });

export function variantName(v: Variant): string {
  const { bm, bn } = tileOf(v);
  const extra = v.kind === 'staged' ? `x${v.bk} pad${v.pad ?? 8}` : v.kind === 'direct' ? ` ku${v.ku ?? 1}` : '';
  return `${v.kind} ${bm}x${bn}${extra} sg${v.sm}x${v.sn} f${v.fm}x${v.fn}${v.swizzle === false ? ' rowmajor-order' : ''}${v.prefetch === false ? ' no-prefetch' : ''}${v.stores ? ` ${v.stores}-stores` : ''}${v.probe ? ` probe:${v.probe}` : ''}${v.depth ? ` depth${v.depth}` : ''}${v.peel ? ' peeled' : ''}${v.interleave ? ' interleaved' : ''}`;
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/** Bytes of workgroup memory per staged copy of A and B. */
function stagedBytes(v: Variant): number {
  const { bm, bn } = tileOf(v);
  const pad = v.pad ?? 8;
  return 2 * (bm * (v.bk! + pad) + v.bk! * (bn + pad));
}

export function stagesOf(v: Variant): number {
  return 2 * stagedBytes(v) <= 48 * 1024 ? 2 : 1;
}

/**
 * The three matrix statements, native or emulated (every invocation holds whole matrices and
 * computes them itself: slow, but it runs the kernel's indexing and staging on lavapipe).
 */
function matrixOps(emulate: boolean) {
  const each = (body: string) => `for (var r = 0u; r < 16u; r++) { for (var q = 0u; q < 16u; q++) { ${body} } }`;
  return emulate
    ? {
        header: 'enable f16;\nalias L = array<f32, 256>;\nalias R = array<f32, 256>;\nalias C = array<f32, 256>;\n',
        subgroupId: '',
        defineSubgroupId: 'let sg_id = lid / 32u;',
        load: (name: string, _type: string, array: string, offset: string, stride: string) =>
          `var ${name}: array<f32, 256>; { let at = ${offset}; let st = ${stride}; ${each(`${name}[r * 16u + q] = f32(${array}[at + r * st + q]);`)} }`,
        mma: (acc: string, x: string, y: string) => `${each(`var t = ${acc}[r * 16u + q]; for (var p = 0u; p < 16u; p++) { t = fma(${x}[r * 16u + p], ${y}[p * 16u + q], t); } ${acc}[r * 16u + q] = t;`)}`,
        store: (array: string, offset: string, value: string, stride: string) => `{ let at = ${offset}; let st = ${stride}; ${each(`${array}[at + r * st + q] = ${value}[r * 16u + q];`)} }`,
      }
    : {
        header: `enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;
alias L = subgroup_matrix_left<f16, 16, 16>;
alias R = subgroup_matrix_right<f16, 16, 16>;
alias C = subgroup_matrix_result<f32, 16, 16>;
`,
        subgroupId: ', @builtin(subgroup_id) sg_id: u32',
        defineSubgroupId: '',
        load: (name: string, type: string, array: string, offset: string, stride: string) => `let ${name} = subgroupMatrixLoad<${type}, row_major>(&${array}, ${offset}, ${stride});`,
        mma: (acc: string, x: string, y: string) => `${acc} = subgroupMatrixMultiplyAccumulate(${x}, ${y}, ${acc});`,
        store: (array: string, offset: string, value: string, stride: string) => `subgroupMatrixStore<row_major>(&${array}, ${offset}, ${value}, ${stride});`,
      };
}

/** The WGSL of `v` for an M×N×K product (each a multiple of the tile; K of the K step). */
export function gemmWgsl(v: Variant, m: number, n: number, k: number, emulate = false): string {
  const { bm, bn } = tileOf(v);
  const threads = v.sm * v.sn * 32;
  const ops = matrixOps(emulate);
  const head = `${ops.header}${v.kind === 'staged' ? '@group(0) @binding(0) var<storage, read> a4: array<vec4<u32>>;\n@group(0) @binding(1) var<storage, read> b4: array<vec4<u32>>;' : '@group(0) @binding(0) var<storage, read> a: array<f16>;\n@group(0) @binding(1) var<storage, read> b: array<f16>;'}
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
`;
  const tilesM = m / bm;
  const tilesN = n / bn;
  // Groups of 8 tile rows walked column by column: consecutive workgroups share B's columns in L2.
  const order =
    v.swizzle === false
      ? `let tm = wid.x / ${tilesN}u;\n  let tn = wid.x % ${tilesN}u;`
      : `let width = ${8 * tilesN}u;
  let first = (wid.x / width) * 8u;
  let rows = min(${tilesM}u - first, 8u);
  let tm = first + (wid.x % width) % rows;
  let tn = (wid.x % width) / rows;`;
  const pre = `${ops.defineSubgroupId}
  ${order}
  let row = tm * ${bm}u + (sg_id / ${v.sn}u) * ${v.fm * 16}u;
  let col = tn * ${bn}u + (sg_id % ${v.sn}u) * ${v.fn * 16}u;
  var acc: array<C, ${v.fm * v.fn}>;`;
  const mma = (aName: (i: number) => string, bName: (j: number) => string) =>
    range(v.fm)
      .flatMap((i) => range(v.fn).map((j) => ops.mma(`acc[${i * v.fn + j}]`, aName(i), bName(j))))
      .join('\n    ');
  const store = range(v.fm)
    .flatMap((i) => range(v.fn).map((j) => ops.store('c', `(row + ${i * 16}u) * ${n}u + col + ${j * 16}u`, `acc[${i * v.fn + j}]`, `${n}u`)))
    .join('\n  ');
  const entry = `@compute @workgroup_size(${threads})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32${ops.subgroupId}) {
  ${pre}`;

  if (v.kind === 'direct' || v.kind === 'ceiling') {
    const ku = v.kind === 'direct' ? (v.ku ?? 1) : 1;
    const loads = (kk: string) =>
      [
        ...range(v.fm).map((i) => ops.load(`a${i}`, 'L', 'a', `(row + ${i * 16}u) * ${k}u + ${kk}`, `${k}u`)),
        ...range(v.fn).map((j) => ops.load(`b${j}`, 'R', 'b', `(${kk}) * ${n}u + col + ${j * 16}u`, `${n}u`)),
      ].join('\n    ');
    if (v.kind === 'ceiling') {
      return `${head}${entry}
  {
    ${loads('0u')}
    for (var kk = 0u; kk < ${k}u; kk += 16u) {
    ${mma((i) => `a${i}`, (j) => `b${j}`)}
    }
  }
  ${store}
}
`;
    }
    const body = range(ku)
      .map((u) => `{\n    ${loads(`kk + ${u * 16}u`)}\n    ${mma((i) => `a${i}`, (j) => `b${j}`)}\n    }`)
      .join('\n    ');
    return `${head}${entry}
  for (var kk = 0u; kk < ${k}u; kk += ${16 * ku}u) {
    ${body}
  }
  ${store}
}
`;
  }

  // staged
  const bk = v.bk!;
  const pad = v.pad ?? 8;
  const sa = bk + pad;
  const sb = bn + pad;
  const aSize = bm * sa;
  const bSize = bk * sb;
  const stages = stagesOf(v);
  const aVec = (bm * bk) / 8;
  const bVec = (bk * bn) / 8;
  if (aVec % threads !== 0 || bVec % threads !== 0) throw new Error(`${variantName(v)}: the staged tiles do not split evenly over ${threads} invocations`);
  const aPer = aVec / threads;
  const bPer = bVec / threads;
  // Register fetch of step `step`'s tiles: 16-byte loads.
  const fetch = (step: string, set = '') => (v.probe === 'no-fetch' && step !== '0u' ? '' : fetchAlways(step, set));
  const fetchAlways = (step: string, set = '') =>
    [
      ...range(aPer).map((q) => `ra${q}${set} = a4[((tm * ${bm}u + (lid + ${q * threads}u) / ${bk / 8}u) * ${k}u + ${step} * ${bk}u) / 8u + (lid + ${q * threads}u) % ${bk / 8}u];`),
      ...range(bPer).map((q) => `rb${q}${set} = b4[((${step} * ${bk}u + (lid + ${q * threads}u) / ${bn / 8}u) * ${n}u + tn * ${bn}u) / 8u + (lid + ${q * threads}u) % ${bn / 8}u];`),
    ].join('\n    ');
  const unpack = (array: string, at: string, reg: string) =>
    v.stores === 'rotated'
      ? `{ let at = ${at}; let word = ${reg}; ${range(4)
          .map((i) => `{ let part = (rot + ${i}u) & 3u; let h = bitcast<vec2<f16>>(word[part]); ${array}[at + 2u * part] = h.x; ${array}[at + 2u * part + 1u] = h.y; }`)
          .join(' ')} }`
      : ['x', 'y', 'z', 'w'].map((c, i) => `{ let h = bitcast<vec2<f16>>(${reg}.${c}); ${array}[${at} + ${2 * i}u] = h.x; ${array}[${at} + ${2 * i + 1}u] = h.y; }`).join(' ');
  const put = (copy: string, set = '') =>
    v.probe === 'no-put' ? '' : putAlways(copy, set);
  const putAlways = (copy: string, set = '') =>
    [
      ...range(aPer).map((q) => unpack('sh_a', `${copy} * ${aSize}u + ((lid + ${q * threads}u) / ${bk / 8}u) * ${sa}u + ((lid + ${q * threads}u) % ${bk / 8}u) * 8u`, `ra${q}${set}`)),
      ...range(bPer).map((q) => unpack('sh_b', `${copy} * ${bSize}u + ((lid + ${q * threads}u) / ${bn / 8}u) * ${sb}u + ((lid + ${q * threads}u) % ${bn / 8}u) * 8u`, `rb${q}${set}`)),
    ].join('\n    ');
  // Substep s's matrices from workgroup copy `copy`, named a0.., b0.. (plus `suffix`).
  const matrixLoadList = (copy: string, s: number, suffix = '') => [
    ...range(v.fm).map((i) => ops.load(`a${i}${suffix}`, 'L', 'sh_a', `${copy} * ${aSize}u + (lrow + ${i * 16}u) * ${sa}u + ${s * 16}u`, `${sa}u`)),
    ...range(v.fn).map((j) => ops.load(`b${j}${suffix}`, 'R', 'sh_b', `${copy} * ${bSize}u + ${s * 16 * sb}u + lcol + ${j * 16}u`, `${sb}u`)),
  ];
  const matrixLoads = (copy: string, s: number) => matrixLoadList(copy, s).join('\n      ');
  const compute = (copy: string) =>
    range(bk / 16)
      .map((s) => `{
      ${v.probe === 'no-load' ? '' : matrixLoads(copy, s)}
      ${mma((i) => `a${i}`, (j) => `b${j}`)}
    }`)
      .join('\n    ');
  const steps = k / bk;
  const decls = `var<workgroup> sh_a: array<f16, ${stages * aSize}>;\nvar<workgroup> sh_b: array<f16, ${stages * bSize}>;\n`;
  const regs = [...range(aPer).map((q) => `var ra${q}: vec4<u32>;`), ...range(bPer).map((q) => `var rb${q}: vec4<u32>;`)].join(' ');
  const barrier = v.probe === 'no-barrier' ? '' : 'workgroupBarrier();';
  // Two register sets, the loop unrolled by two so each is named statically: step t+1's words were
  // fetched after step t-1's put, two steps of MMAs before they are stored.
  const deepLoop = () => {
    if (steps % 2 !== 0) throw new Error(`${variantName(v)}: depth 2 needs an even number of K steps (${steps})`);
    const sets = ['_0', '_1'];
    const half = (h: number) => {
      const t = `(s + ${h}u)`;
      const other = sets[1 - h]!;
      const next = `if (${t} + 1u < ${steps}u) {\n    ${put(stages === 2 ? `${1 - h}u` : '0u', other)}\n    }\n    if (${t} + 3u < ${steps}u) {\n    ${fetch(`(${t} + 3u)`, other)}\n    }`;
      return stages === 2 ? `${compute(`${h}u`)}\n    ${next}\n    ${barrier}` : `${compute('0u')}\n    ${barrier}\n    ${next}\n    ${barrier}`;
    };
    return `${sets.flatMap((set) => [...range(aPer).map((q) => `var ra${q}${set}: vec4<u32>;`), ...range(bPer).map((q) => `var rb${q}${set}: vec4<u32>;`)]).join(' ')}
  {
    ${fetch('0u', '_0')}
    ${putAlways('0u', '_0')}
    ${fetch('1u', '_1')}
    ${steps > 2 ? fetch('2u', '_0') : ''}
  }
  workgroupBarrier();
  for (var s = 0u; s < ${steps}u; s += 2u) {
    ${half(0)}
    ${half(1)}
  }`;
  };
  // Peeled: every step but the last fetches and stores unconditionally, one basic block the compiler
  // may interleave (the stores into the other copy among this copy's MMAs); the last step computes.
  // `step(copy, into)` computes on `copy` and, with two copies, stores the next step's words `into` the other.
  const peeledLoop = (step: (copy: string, into?: string) => string) => {
    const last = step(stages === 2 ? `${(steps - 1) % 2}u` : '0u');
    const body =
      stages === 2
        ? `let cur = s % 2u;\n    ${fetch('(s + 1u)')}\n    ${step('cur', '(1u - cur)')}\n    ${barrier}`
        : `${fetch('(s + 1u)')}\n    ${step('0u')}\n    ${barrier}\n    ${put('0u')}\n    ${barrier}`;
    return `for (var s = 0u; s < ${steps - 1}u; s++) {\n    ${body}\n  }\n  ${last}`;
  };
  const computeThenPut = (copy: string, into?: string) => (into === undefined ? compute(copy) : `${compute(copy)}\n    ${put(into)}`);
  // Interleaved: substep s+1's matrix loads issued before substep s's MMAs, and (two copies) the
  // next step's stores spread among the MMAs, in the text order the compiler starts from.
  const interleavedStep = (copy: string, putCopy?: string) => {
    const subs = bk / 16;
    const loadsOf = (q: number) => matrixLoadList(copy, q, `_${q}`);
    const stores = putCopy === undefined ? [] : putAlways(putCopy).split('\n    ');
    const total = subs * v.fm * v.fn;
    // Over the second half of the MMAs: a store waits for its word's global load, which the first half covers.
    const half = Math.ceil(total / 2);
    const out: string[] = [...loadsOf(0)];
    let g = 0;
    for (let q = 0; q < subs; q++) {
      if (q + 1 < subs) out.push(...loadsOf(q + 1));
      for (const i of range(v.fm)) {
        for (const j of range(v.fn)) {
          out.push(ops.mma(`acc[${i * v.fn + j}]`, `a${i}_${q}`, `b${j}_${q}`));
          if (g >= total - half) out.push(...stores.slice(Math.floor(((g - (total - half)) * stores.length) / half), Math.floor(((g - (total - half) + 1) * stores.length) / half)));
          g++;
        }
      }
    }
    return `{\n    ${out.join('\n    ')}\n    }`;
  };
  const loop = v.interleave
    ? peeledLoop(interleavedStep)
    : v.peel
    ? peeledLoop(computeThenPut)
    : v.prefetch === false
      ? stages === 2
        ? `for (var s = 0u; s < ${steps}u; s++) {
    let cur = s % 2u;
    if (s + 1u < ${steps}u) {
    ${fetch('(s + 1u)')}
    ${put('(1u - cur)')}
    }
    ${compute('cur')}
    ${barrier}
  }`
        : `for (var s = 0u; s < ${steps}u; s++) {
    ${compute('0u')}
    ${barrier}
    if (s + 1u < ${steps}u) {
    ${fetch('(s + 1u)')}
    ${put('0u')}
    }
    ${barrier}
  }`
      : stages === 2
      ? `for (var s = 0u; s < ${steps}u; s++) {
    let cur = s % 2u;
    let more = s + 1u < ${steps}u;
    if (more) {
    ${fetch('(s + 1u)')}
    }
    ${compute('cur')}
    if (more) {
    ${put('(1u - cur)')}
    }
    ${barrier}
  }`
      : `for (var s = 0u; s < ${steps}u; s++) {
    let more = s + 1u < ${steps}u;
    if (more) {
    ${fetch('(s + 1u)')}
    }
    ${compute('0u')}
    ${barrier}
    if (more) {
    ${put('0u')}
    }
    ${barrier}
  }`;
  const steady = `${regs}
  {
    ${fetch('0u')}
    ${putAlways('0u')}
  }
  workgroupBarrier();
  ${v.probe === 'no-load' ? matrixLoads('0u', 0) : ''}
  ${loop}`;
  return `${head}${decls}${entry}
  let lrow = (sg_id / ${v.sn}u) * ${v.fm * 16}u;
  let lcol = (sg_id % ${v.sn}u) * ${v.fn * 16}u;
  let rot = (lid >> 3u) & 3u; // rotated stores: the part a lane writes first
  ${v.depth === 2 ? deepLoop() : steady}
  ${store}
}
`;
}

/** Deterministic data: small integers in [-4, 3], or uniform in [-1, 1) on the f16 grid; with its f16 bits. */
function data(count: number, seed: number, integers: boolean): { values: Float32Array; bits: Uint16Array } {
  const values = new Float32Array(count);
  let s = seed >>> 0;
  for (let i = 0; i < count; i++) {
    s = (s * 1664525 + 1013904223) >>> 0;
    // Uniform: a multiple of 2^-11 in [-1, 1): exactly representable in f16.
    const x = integers ? (s >>> 29) - 4 : ((s >>> 21) - 1024) / 1024;
    values[i] = x;
  }
  return { values, bits: toHalfBits(values) };
}

/** C's rows `rows` by the CPU, in f64. */
function referenceRows(a: Float32Array, b: Float32Array, n: number, k: number, rows: readonly number[]): Float64Array[] {
  return rows.map((r) => {
    const out = new Float64Array(n);
    for (let p = 0; p < k; p++) {
      const x = a[r * k + p]!;
      if (x === 0) continue;
      const off = p * n;
      for (let j = 0; j < n; j++) out[j] = out[j]! + x * b[off + j]!;
    }
    return out;
  });
}

interface Problem {
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly a: GPUBuffer;
  readonly b: GPUBuffer;
  readonly c: GPUBuffer;
  readonly rows: readonly number[];
  readonly want: readonly Float64Array[];
  readonly tolerance: number;
}

function problem(device: GPUDevice, m: number, n: number, k: number, integers: boolean, rows: readonly number[]): Problem {
  const A = data(m * k, 1, integers);
  const B = data(k * n, 2, integers);
  const upload = (bits: Uint16Array) => {
    const buffer = device.createBuffer({ size: bits.byteLength, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
    device.queue.writeBuffer(buffer, 0, bits);
    return buffer;
  };
  const c = device.createBuffer({ size: m * n * 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
  // f32 sums of K products of values in [-1, 1): well inside 1e-5·K; integers: exact.
  return { m, n, k, a: upload(A.bits), b: upload(B.bits), c, rows, want: referenceRows(A.values, B.values, n, k, rows), tolerance: integers ? 0 : 1e-5 * k };
}

class Kernel {
  private constructor(
    readonly pipeline: GPUComputePipeline,
    readonly group: GPUBindGroup,
    readonly workgroups: number,
  ) {}

  static async create(device: GPUDevice, v: Variant, p: Problem, emulate: boolean): Promise<Kernel> {
    const code = gemmWgsl(v, p.m, p.n, p.k, emulate);
    device.pushErrorScope('validation');
    const module = device.createShaderModule({ code });
    const info = await module.getCompilationInfo();
    const errors = info.messages.filter((m) => m.type === 'error').map((m) => `${m.lineNum}:${m.linePos} ${m.message}`);
    const pipeline = await device.createComputePipelineAsync({ layout: 'auto', compute: { module, entryPoint: 'main' } });
    const buffers = [p.a, p.b, p.c];
    const group = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: buffers.map((buffer, binding) => ({ binding, resource: { buffer } })) });
    const scope = await device.popErrorScope();
    if (scope || errors.length > 0) throw new Error([...errors, scope?.message ?? ''].join('; ').slice(0, 600));
    const { bm, bn } = tileOf(v);
    return new Kernel(pipeline, group, (p.m / bm) * (p.n / bn));
  }

  /** `runs` launches, one compute pass each, back to back in one submission: each pass's GPU ms. */
  async time(device: GPUDevice, runs: number): Promise<number[]> {
    const querySet = device.createQuerySet({ type: 'timestamp', count: 2 * runs });
    const resolve = device.createBuffer({ size: 16 * runs, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
    const read = device.createBuffer({ size: 16 * runs, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    try {
      const encoder = device.createCommandEncoder();
      for (let i = 0; i < runs; i++) {
        const pass = encoder.beginComputePass({ timestampWrites: { querySet, beginningOfPassWriteIndex: 2 * i, endOfPassWriteIndex: 2 * i + 1 } });
        pass.setPipeline(this.pipeline);
        pass.setBindGroup(0, this.group);
        pass.dispatchWorkgroups(this.workgroups);
        pass.end();
      }
      encoder.resolveQuerySet(querySet, 0, 2 * runs, resolve, 0);
      encoder.copyBufferToBuffer(resolve, 0, read, 0, 16 * runs);
      device.queue.submit([encoder.finish()]);
      await read.mapAsync(GPUMapMode.READ);
      const ticks = new BigUint64Array(read.getMappedRange().slice(0));
      read.unmap();
      return range(runs).map((i) => Number(ticks[2 * i + 1]! - ticks[2 * i]!) / 1e6);
    } finally {
      querySet.destroy();
      resolve.destroy();
      read.destroy();
    }
  }
}

/** Runs once into a NaN-filled C and compares the sampled rows: the largest error, or Infinity. */
async function check(device: GPUDevice, kernel: Kernel, p: Problem): Promise<number> {
  const rowBytes = p.n * 4;
  const read = device.createBuffer({ size: p.rows.length * rowBytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  try {
    device.queue.writeBuffer(p.c, 0, new Float32Array(p.m * p.n).fill(Number.NaN));
    await kernel.time(device, 1);
    const encoder = device.createCommandEncoder();
    for (const [i, r] of p.rows.entries()) encoder.copyBufferToBuffer(p.c, r * rowBytes, read, i * rowBytes, rowBytes);
    device.queue.submit([encoder.finish()]);
    await read.mapAsync(GPUMapMode.READ);
    const got = new Float32Array(read.getMappedRange().slice(0));
    read.unmap();
    let worst = 0;
    for (const [i] of p.rows.entries()) {
      for (let j = 0; j < p.n; j++) {
        const e = Math.abs(got[i * p.n + j]! - p.want[i]![j]!);
        worst = Number.isNaN(e) ? Infinity : Math.max(worst, e);
      }
    }
    return worst;
  } finally {
    read.destroy();
  }
}

export interface SweepRow {
  readonly name: string;
  readonly variant: Variant;
  readonly exactError?: number;
  readonly timedError?: number;
  readonly tolerance?: number;
  readonly ok: boolean;
  readonly ms?: ReturnType<typeof summarize>;
  readonly tflops?: number;
  readonly error?: string;
}

/** A staged variant with padded rows (8 halves). */
const staged = (sm: number, sn: number, fm: number, fn: number, bk: number): Variant => ({ kind: 'staged', sm, sn, fm, fn, bk, pad: 8 });

/** The structures and tiles of the first sweep (issue 19, call 1). */
export function defaultVariants(): Variant[] {
  const direct = (sm: number, sn: number, fm: number, fn: number, ku = 1, swizzle = true): Variant => ({ kind: 'direct', sm, sn, fm, fn, ku, swizzle });
  const staged = (sm: number, sn: number, fm: number, fn: number, bk: number, pad = 8): Variant => ({ kind: 'staged', sm, sn, fm, fn, bk, pad });
  return [
    { kind: 'ceiling', sm: 2, sn: 2, fm: 4, fn: 4 },
    { kind: 'ceiling', sm: 2, sn: 4, fm: 4, fn: 2 },
    { kind: 'ceiling', sm: 2, sn: 2, fm: 2, fn: 2 },
    direct(2, 2, 2, 2),
    direct(2, 2, 4, 2),
    direct(2, 2, 4, 4),
    direct(2, 2, 4, 4, 2),
    direct(2, 2, 4, 4, 1, false),
    direct(2, 4, 4, 2),
    direct(4, 2, 2, 4),
    direct(2, 4, 4, 4),
    direct(1, 1, 4, 4),
    direct(2, 2, 2, 4, 2),
    staged(2, 2, 4, 4, 32),
    staged(2, 2, 4, 4, 32, 0),
    staged(2, 2, 4, 4, 64),
    staged(2, 4, 4, 2, 32),
    staged(4, 2, 2, 4, 32),
    staged(2, 4, 4, 2, 64),
    staged(2, 4, 4, 4, 32),
    staged(4, 2, 4, 4, 32),
    staged(2, 2, 4, 2, 32),
    staged(2, 2, 2, 2, 32),
    staged(2, 2, 2, 4, 32),
    staged(4, 4, 2, 2, 32),
  ];
}

export interface SweepOptions {
  /** M = N = K of the timed product (default 4096). */
  readonly size?: number;
  /** The exact check's shape on small integers (default 512x512x256). */
  readonly exact?: readonly [number, number, number];
  /** Emulated matrices (an adapter without subgroup matrices, e.g. lavapipe): checks only, no timing. */
  readonly emulate?: boolean;
  /** Time the list again in reverse order (a drift of clocks over the run shows as a difference). */
  readonly repeat?: boolean;
}

/**
 * 2026-11-25: registers against occupancy. The best tiles with and without the register prefetch
 * (32 registers of words live across every step's MMAs at 128x128x64); run once per Dawn toggle set.
 */
export function occupancyVariants(): Variant[] {
  const staged = (sm: number, sn: number, fm: number, fn: number, bk: number, prefetch = true): Variant => ({ kind: 'staged', sm, sn, fm, fn, bk, pad: 8, ...(!prefetch && { prefetch }) });
  return [staged(4, 2, 2, 4, 64), staged(4, 2, 2, 4, 64, false), staged(4, 2, 2, 4, 32, false), staged(2, 4, 4, 4, 16), staged(2, 4, 4, 4, 16, false), staged(4, 2, 4, 4, 32, false)];
}

/** Call 2: around call 1's winners (staged, 8 subgroups), K steps of 16–64, pads, 512 invocations; the MMA ceiling first. */
export function focusVariants(): Variant[] {
  const staged = (sm: number, sn: number, fm: number, fn: number, bk: number, pad = 8): Variant => ({ kind: 'staged', sm, sn, fm, fn, bk, pad });
  return [
    { kind: 'ceiling', sm: 2, sn: 2, fm: 4, fn: 4 },
    staged(4, 2, 2, 4, 32),
    staged(2, 4, 4, 2, 32),
    staged(2, 2, 4, 4, 32),
    staged(4, 2, 2, 4, 16),
    staged(4, 2, 2, 4, 64),
    staged(2, 4, 4, 4, 32),
    staged(2, 4, 4, 4, 32, 0),
    staged(4, 2, 4, 4, 32, 0),
    staged(2, 4, 4, 4, 16),
    staged(4, 2, 4, 4, 16),
    staged(4, 4, 2, 4, 32),
    staged(4, 4, 4, 2, 32),
    { kind: 'direct', sm: 2, sn: 2, fm: 4, fn: 4, ku: 1 },
  ];
}

/** The next sweep (gemm.md): around call 3's winners, 128x128x64 sg4x2 and 128x256x16 sg2x4 (K steps that fit 48 KiB). */
export function nextVariants(): Variant[] {
  return [
    { kind: 'ceiling', sm: 4, sn: 2, fm: 2, fn: 4 },
    staged(4, 2, 2, 4, 64),
    staged(2, 4, 4, 2, 64),
    staged(4, 4, 2, 2, 64),
    staged(2, 4, 2, 4, 64),
    staged(4, 2, 4, 2, 64),
    staged(2, 4, 4, 4, 16),
    staged(4, 2, 2, 4, 32),
  ];
}

/**
 * 2026-11-25 evening: where a staged step's time goes. The two best tiles and 128x128x32 (two
 * copies), each as it is, with rotated stores, and with one part left out (probes).
 */
export function whereVariants(): Variant[] {
  const tiles = [staged(4, 2, 2, 4, 64), staged(2, 4, 4, 4, 16), staged(4, 2, 2, 4, 32)];
  return [
    { kind: 'ceiling', sm: 4, sn: 2, fm: 2, fn: 4 },
    { kind: 'ceiling', sm: 2, sn: 4, fm: 4, fn: 4 },
    ...tiles.flatMap((t): Variant[] => [
      t,
      { ...t, stores: 'rotated' },
      { ...t, probe: 'no-put' },
      { ...t, stores: 'rotated', probe: 'no-fetch' },
      { ...t, stores: 'rotated', probe: 'no-load' },
    ]),
  ];
}

/** Call 2: words fetched two steps ahead (two register sets) against one, around the best tiles; plain-store probe. */
export function deepVariants(): Variant[] {
  const tiles = [staged(2, 4, 4, 4, 16), staged(4, 2, 2, 4, 32), staged(4, 2, 2, 4, 64), staged(2, 4, 4, 4, 32), staged(4, 2, 4, 4, 16), staged(2, 4, 4, 2, 32)];
  return [...tiles.flatMap((t): Variant[] => [t, { ...t, depth: 2 }]), { ...staged(4, 4, 2, 4, 16), depth: 2 }, { ...staged(2, 4, 4, 4, 16), probe: 'no-fetch' }, { ...staged(4, 2, 2, 4, 64), probe: 'no-fetch' }];
}

/**
 * Call 3: are the loads waited for at the barrier (probes without the loop's barriers, one and two
 * register sets), and do smaller workgroups, several to an SM, hide the loads better?
 */
export function occupancyBarrierVariants(): Variant[] {
  const both = (t: Variant): Variant[] => [t, { ...t, depth: 2 }];
  return [
    ...[staged(2, 4, 4, 4, 16), staged(4, 2, 2, 4, 32)].flatMap((t): Variant[] => [{ ...t, probe: 'no-barrier' }, { ...t, probe: 'no-barrier', depth: 2 }]),
    ...both(staged(2, 2, 2, 4, 32)),
    ...both(staged(2, 2, 4, 2, 32)),
    ...both(staged(2, 4, 2, 4, 32)),
    ...both(staged(2, 2, 4, 4, 32)),
    ...both(staged(2, 2, 2, 4, 64)),
  ];
}

/** Call 4: the loop body as one basic block (last step peeled), against the loop with branches. */
export function peelVariants(): Variant[] {
  const tiles = [staged(2, 4, 4, 4, 16), staged(4, 2, 2, 4, 32), staged(4, 2, 4, 4, 16), staged(2, 4, 4, 4, 32), staged(4, 2, 2, 4, 64), staged(2, 4, 4, 2, 32)];
  return tiles.flatMap((t): Variant[] => [t, { ...t, peel: true }]);
}

/** Call 6: the interleaved step against the loop as is. */
export function interleaveVariants(): Variant[] {
  const tiles = [staged(2, 4, 4, 4, 16), staged(4, 2, 2, 4, 32), staged(2, 4, 4, 4, 32), staged(4, 2, 2, 4, 64), staged(4, 2, 4, 4, 16), staged(2, 4, 4, 2, 32)];
  return tiles.flatMap((t): Variant[] => [t, { ...t, interleave: true }]);
}

export async function gemmSweep(variants: readonly Variant[], options: SweepOptions = {}, log: (line: string) => void = console.log): Promise<{ adapter: unknown; rows: SweepRow[] }> {
  const size = options.size ?? 4096;
  const [em, en, ek] = options.exact ?? [512, 512, 256];
  const emulate = options.emulate ?? false;
  const handle = await openDevice();
  try {
    const { device } = handle;
    const adapter = { ...handle.adapterInfo, features: handle.features, toggles: handle.toggles };
    const exact = problem(device, em, en, ek, true, range(em));
    const sampled = [0, 1, 777, 2048, size - 1].filter((r) => r < size);
    const timed = emulate ? exact : problem(device, size, size, size, false, sampled);
    const rows: SweepRow[] = [];
    for (const variant of [...variants, ...(options.repeat ? [...variants].reverse() : [])]) {
      const name = variantName(variant);
      try {
        if (emulate) {
          const exactError = await check(device, await Kernel.create(device, variant, exact, true), exact);
          rows.push({ name, variant, exactError, ok: exactError === 0 });
        } else if (variant.kind === 'ceiling' || variant.probe) {
          const kernel = await Kernel.create(device, variant, timed, false);
          const ms = await settledTimes((runs) => kernel.time(device, runs));
          rows.push({ name, variant, ok: true, ms, tflops: (2 * size ** 3) / (ms.median * 1e-3) / 1e12 });
        } else {
          const exactError = await check(device, await Kernel.create(device, variant, exact, false), exact);
          const kernel = await Kernel.create(device, variant, timed, false);
          const timedError = await check(device, kernel, timed);
          const ok = exactError === 0 && timedError <= timed.tolerance;
          const ms = await settledTimes((runs) => kernel.time(device, runs));
          rows.push({ name, variant, exactError, timedError, tolerance: timed.tolerance, ok, ms, tflops: (2 * size ** 3) / (ms.median * 1e-3) / 1e12 });
        }
      } catch (e) {
        rows.push({ name, variant, ok: false, error: (e as Error).message.slice(0, 600) });
      }
      const r = rows[rows.length - 1]!;
      log(
        `${r.ok ? 'ok  ' : 'FAIL'} ${name.padEnd(44)} ${r.error ?? (r.ms === undefined ? `exact err ${r.exactError} (emulated)` : `${r.ms.median.toFixed(3)} ms ${r.tflops!.toFixed(1).padStart(6)} TFLOP/s${r.exactError === undefined ? ` (no check: ${variant.probe ? 'probe' : 'ceiling'})` : `  exact err ${r.exactError}, ${size}^3 sampled err ${r.timedError!.toExponential(2)}`}`)}`,
      );
    }
    return { adapter, rows };
  } finally {
    handle.close();
  }
}

/** GPU time a timed batch lasts at least. */
const BATCH_MS = 200;

/**
 * Times a kernel at settled clocks. Batches of 10 sub-millisecond launches were not enough: the
 * H100 drops to 345 MHz within the host gaps between variants (call3/clocks.csv), two short batches
 * then agree at low clocks, and the same kernel measured up to 2.6x apart across the sweep. So:
 * batches of at least 200 ms, after warmUntilSettled's second of busy GPU and settled check.
 */
export async function settledTimes(time: (runs: number) => Promise<number[]>) {
  const perRun = summarize(await time(3)).median;
  const runs = Math.min(1000, Math.max(10, Math.ceil(BATCH_MS / perRun)));
  await warmUntilSettled(() => time(runs), WARMUP_BUSY_MS);
  return summarize(await time(runs));
}

const isMain = process.argv[1] !== undefined && /gemm-sweep\.(m?js|ts)$/.test(process.argv[1]);
if (isMain) {
  const { values } = parseArgs({ options: { only: { type: 'string' }, size: { type: 'string' }, exact: { type: 'string' }, emulate: { type: 'boolean' }, set: { type: 'string' }, repeat: { type: 'boolean' }, out: { type: 'string' }, print: { type: 'string' } } });
  const sets: Record<string, () => Variant[]> = { focus: focusVariants, next: nextVariants, occupancy: occupancyVariants, where: whereVariants, deep: deepVariants, 'occupancy-barrier': occupancyBarrierVariants, peel: peelVariants, interleave: interleaveVariants };
  const all = (sets[values.set ?? ''] ?? defaultVariants)();
  const only = values.only?.split(',');
  const variants = only ? all.filter((v) => only.some((o) => variantName(v).includes(o))) : all;
  if (values.print) {
    console.log(gemmWgsl(variants[0]!, Number(values.print), Number(values.print), Number(values.print)));
  } else {
    const exact = values.exact?.split('x').map(Number) as [number, number, number] | undefined;
    const result = await gemmSweep(variants, { size: Number(values.size ?? 4096), ...(exact && { exact }), ...(values.emulate && { emulate: true }), ...(values.repeat && { repeat: true }) });
    const out = values.out ?? process.env['OUT'];
    if (out) {
      mkdirSync(out, { recursive: true });
      writeFileSync(join(out, 'gemm-sweep.json'), JSON.stringify(result, null, 1));
    }
  }
}
