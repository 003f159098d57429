/**
 * The run API: a framework's own kernels on its own data, one device or several, tensors kept on
 * the devices between kernels; every input checked before anything runs. The `running` region is
 * docs/running.md's code.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDevices, type DeviceHandle } from '@syncopate/runtime';
import { TensorInputError, UsageError, gemmKernel, lowerToWgsl, openDevice, openDeviceGroup, ringAllGather, compileOrThrow, ringReduceScatter, runFused, type DeviceGroup, type Program, type Tensor } from '@syncopate/core';
import { docCodeBlock, readRepoFile, region } from './doc-sync.js';

// #region running
// A local GEMM, C = A·W, with A sharded on rows over 4 ranks and gathered by a ring (AllGather + GEMM).
const [M, N, K, RANKS] = [64, 32, 32, 4];
const kernel = gemmKernel({ m: M, n: N, k: K, blockM: 16, blockN: 16, blockK: 8 }, { ranks: RANKS, distribute: 'ag' });
const compiled = compileOrThrow(kernel, ringAllGather({ ranks: RANKS, tensor: { name: 'A', shape: [M, K] }, axis: 0 }));

// Your data: each rank's shard of A (M/RANKS rows), each rank's own W.
const random = (n: number) => Float32Array.from({ length: n }, () => Math.round(Math.random() * 4 - 2));
const shards = Array.from({ length: RANKS }, () => random((M / RANKS) * K));
const weights = Array.from({ length: RANKS }, () => random(K * N));

// Your reference: C_r = [A_0; A_1; ...] · W_r on the CPU.
function reference(rank: number): Float32Array {
  const a = new Float32Array(M * K);
  shards.forEach((s, r) => a.set(s, r * (M / RANKS) * K));
  const c = new Float32Array(M * N);
  for (let i = 0; i < M; i++) for (let p = 0; p < K; p++) for (let j = 0; j < N; j++) c[i * N + j]! += a[i * K + p]! * weights[rank]![p * N + j]!;
  return c;
}

async function runOn(devices: number): Promise<number> {
  const group = await openDeviceGroup({ devices }); // open the devices once
  try {
    const program = await group.load(compiled); // lowered for these devices, pipelines made
    const A = await group.tensor(program.spec('A'), shards); // a shard per rank
    const W = await group.tensor(program.spec('B'), weights); // a whole copy per rank
    const C = await group.tensor(program.spec('C'), { fill: 0 }); // zeros, asked for
    await program.run({ A, B: W, C });
    const result = await C.read(); // every rank's copy, as f32
    let worst = 0;
    result.forEach((c, rank) => reference(rank).forEach((x, i) => (worst = Math.max(worst, Math.abs(x - c[i]!)))));
    return worst;
  } finally {
    group.close(); // frees the tensors and programs' devices
  }
}
// #endregion running

describe('the run API on your own data', () => {
  it.each([1, 2])('runs your kernel on your tensors over %i device(s), matching your reference', async (devices) => {
    expect(await runOn(devices)).toBe(0);
  });

  it("docs/running.md's code is this test's", () => {
    expect(docCodeBlock(readRepoFile('docs/running.md'), 'packages/core/test/run-api.test.ts', 'running')).toBe(region(readRepoFile('packages/core/test/run-api.test.ts'), 'running'));
  });
});

/** relu-free tensor-parallel MLP: H = allgather(X)·W1 (each rank its columns), Y = reduce-scatter(H_r·W2_r). */
describe("one program's output is the next one's input, on the devices", () => {
  const [S, Hd, F, R] = [32, 16, 32, 2];
  const up = compileOrThrow(gemmKernel({ m: S, n: F / R, k: Hd, blockM: 16, blockN: 16, blockK: 8 }, { ranks: R, distribute: 'ag', name: 'up' }), ringAllGather({ ranks: R, tensor: { name: 'A', shape: [S, Hd] }, axis: 0 }));
  const down = compileOrThrow(gemmKernel({ m: S, n: Hd, k: F / R, blockM: 16, blockN: 16, blockK: 8 }, { ranks: R, distribute: 'rs', name: 'down' }), ringReduceScatter({ ranks: R, tensor: { name: 'C', shape: [S, Hd] }, axis: 0 }));
  const ints = (n: number, seed: number) => Float32Array.from({ length: n }, (_, i) => ((i * 7 + seed * 13) % 5) - 2);

  it.each([1, 2])('chains AllGather+GEMM into GEMM+ReduceScatter over %i device(s), no host round trip between', async (devices) => {
    const group = await openDeviceGroup({ devices });
    try {
      const [first, second] = [await group.load(up), await group.load(down)];
      const X = await group.tensor(first.spec('A'), Array.from({ length: R }, (_, r) => ints((S / R) * Hd, r)));
      const W1 = await group.tensor(first.spec('B'), Array.from({ length: R }, (_, r) => ints(Hd * (F / R), 10 + r)));
      const W2 = await group.tensor(second.spec('B'), Array.from({ length: R }, (_, r) => ints((F / R) * Hd, 20 + r)));
      const H = await group.tensor(first.spec('C'), { fill: 0 });
      const Y = await group.tensor(second.spec('C'), { fill: 0 });
      await first.run({ A: X, B: W1, C: H });
      await second.run({ A: H, B: W2, C: Y }); // H never leaves the devices
      const y = await Y.read();
      // The CPU: the whole X, each rank's H_r = X·W1_r, Y = Σ_r H_r·W2_r; rank r keeps its rows.
      const x = new Float32Array(S * Hd);
      for (let r = 0; r < R; r++) x.set(ints((S / R) * Hd, r), r * (S / R) * Hd);
      const sum = new Float32Array(S * Hd);
      for (let r = 0; r < R; r++) {
        const w1 = ints(Hd * (F / R), 10 + r);
        const w2 = ints((F / R) * Hd, 20 + r);
        const h = new Float32Array(S * (F / R));
        for (let i = 0; i < S; i++) for (let p = 0; p < Hd; p++) for (let j = 0; j < F / R; j++) h[i * (F / R) + j]! += x[i * Hd + p]! * w1[p * (F / R) + j]!;
        for (let i = 0; i < S; i++) for (let p = 0; p < F / R; p++) for (let j = 0; j < Hd; j++) sum[i * Hd + j]! += h[i * (F / R) + p]! * w2[p * Hd + j]!;
      }
      for (let r = 0; r < R; r++) {
        const rows = [r * (S / R) * Hd, (r + 1) * (S / R) * Hd] as const;
        expect(Array.from(y[r]!.subarray(...rows))).toEqual(Array.from(sum.subarray(...rows)));
      }
    } finally {
      group.close();
    }
  });
});

describe('every input checked before anything runs', () => {
  let group: DeviceGroup;
  let program: Program;
  let good: { A: Tensor; B: Tensor; C: Tensor };
  beforeAll(async () => {
    group = await openDeviceGroup();
    program = await group.load(compiled);
    good = { A: await group.tensor(program.spec('A'), shards), B: await group.tensor(program.spec('B'), weights), C: await group.tensor(program.spec('C'), { fill: 0 }) };
  });
  afterAll(() => group?.close());

  /** The TensorInputError `run` throws, its fields. */
  async function refusal(make: () => Promise<unknown>): Promise<TensorInputError> {
    const error = await make().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TensorInputError);
    expect(error).toBeInstanceOf(UsageError);
    return error as TensorInputError;
  }

  const short = (arrays: Float32Array[], ranks: readonly number[], by: number) => arrays.map((a, r) => (ranks.includes(r) ? a.subarray(0, a.length - by) : a));

  it('A 7 elements short on every rank', async () => {
    const e = await refusal(() => group.tensor(program.spec('A'), short(shards, [0, 1, 2, 3], 7)));
    expect([e.tensor, e.rank, e.found]).toEqual(['A', 0, '505 elements']);
    expect(e.expected).toBe('2048 elements (its whole copy, [64, 32]) or 512 (the shard it owns, [16, 32]: sharded on axis 0)');
  });

  it('short on one rank only, and on rank 0 only', async () => {
    expect((await refusal(() => group.tensor(program.spec('A'), short(shards, [2], 7)))).rank).toBe(2);
    expect((await refusal(() => group.tensor(program.spec('B'), short(weights, [0], 1)))).message).toBe('tensor B, rank 0: expected 1024 elements (its whole copy, [32, 32]), found 1023 elements');
  });

  it('data for 2 of 4 ranks', async () => {
    const e = await refusal(() => group.tensor(program.spec('A'), shards.slice(0, 2)));
    expect(e.message).toBe('tensor A: expected data for 4 ranks (one array each), found 2');
  });

  it('the wrong element type', async () => {
    expect((await refusal(() => group.tensor(program.spec('B'), weights.map((w) => Float64Array.from(w)) as unknown as Float32Array[]))).message).toBe(
      'tensor B, rank 0: expected Float32Array for an f32 tensor, found Float64Array',
    );
    expect((await refusal(() => group.tensor(program.spec('B'), weights.map((w) => new Uint16Array(w.length))))).found).toBe('Uint16Array');
    expect((await refusal(() => group.tensor(program.spec('C'), { fill: Number.NaN }))).expected).toBe('a finite fill value');
  });

  it('B misspelled b, a tensor missing, a tensor of another shape', async () => {
    const typo = await refusal(() => program.run({ A: good.A, b: good.B, C: good.C }));
    expect(typo.message).toBe("tensor b: expected one of the kernel's tensors (A, B, C): did you mean B?, found a name it does not declare");
    expect((await refusal(() => program.run({ A: good.A, C: good.C }))).tensor).toBe('B');
    const other = await group.tensor({ ...program.spec('B'), shape: [16, 32] }, { fill: 1 });
    expect((await refusal(() => program.run({ A: good.A, B: other, C: good.C }))).message).toBe('tensor B: expected [32, 32] f32 over 4 ranks, found [16, 32] f32 over 4 ranks');
    other.destroy();
  });

  it("a tensor of another group, a destroyed one, and the group's own ranks", async () => {
    const elsewhere = await openDeviceGroup();
    try {
      const B = await elsewhere.tensor(program.spec('B'), weights);
      expect((await refusal(() => program.run({ ...good, B }))).found).toBe('one of another group');
    } finally {
      elsewhere.close();
    }
    const C = await group.tensor(program.spec('C'), { fill: 0 });
    C.destroy();
    expect((await refusal(() => program.run({ ...good, C }))).found).toBe('one destroyed');
  });

  it('nothing ran: the good tensors are as they were', async () => {
    expect((await good.C.read()).every((c) => c.every((x) => x === 0))).toBe(true);
  });
});

describe('runFused checks its inputs too', () => {
  it('refuses a short array on rank 0 only, a missing tensor and a misspelt one, before anything runs', async () => {
    const device = await openDevice();
    try {
      const fused = lowerToWgsl(compiled);
      const whole = (n: number) => Array.from({ length: RANKS }, () => new Float32Array(n));
      const inputs = { A: whole(M * K), B: whole(K * N), C: whole(M * N) };
      const refused = (data: Record<string, Float32Array[]>) => runFused(device, fused, data, ['C']).then(() => undefined, (e: unknown) => e as TensorInputError);
      const short = await refused({ ...inputs, A: inputs.A.map((a, r) => (r === 0 ? a.subarray(1) : a)) });
      expect(short).toBeInstanceOf(TensorInputError);
      expect([short!.tensor, short!.rank, short!.found]).toEqual(['A', 0, `${M * K - 1} elements`]);
      expect((await refused({ A: inputs.A, C: inputs.C }))!.message).toBe('tensor B: expected data for it (the kernel reads or writes B), found none given');
      expect((await refused({ ...inputs, b: inputs.B }))!.message).toMatch(/^tensor b: expected one of the kernel's tensors \(A, B, C\): did you mean B\?/);
      // And what fits runs.
      const { tensors } = await runFused(device, fused, inputs, ['C']);
      expect(tensors.C!.every((c) => c.every((x) => x === 0))).toBe(true);
    } finally {
      device.close();
    }
  });
});

describe('your own GPU buffers as tensors', () => {
  let handles: DeviceHandle[];
  beforeAll(async () => {
    handles = await openDevices(1, { gpus: [], device: { requiredLimits: 'adapter-max' } });
  });
  afterAll(() => handles?.forEach((h) => h.close()));

  it('binds them, runs, and leaves them to you; refuses one too small or of the wrong usage', async () => {
    const group = await openDeviceGroup({ handles });
    const program = await group.load(compiled);
    const device = handles[0]!.device;
    const bytes = (name: string) => RANKS * program.spec(name).shape.reduce((a, b) => a * b) * 4;
    const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    const own = (name: string, data: Float32Array) => {
      const buffer = device.createBuffer({ size: bytes(name), usage });
      device.queue.writeBuffer(buffer, 0, data);
      return group.wrap(program.spec(name), [buffer]);
    };
    // Every rank's whole copy of A back to back, its own shard in place.
    const a = new Float32Array(RANKS * M * K);
    shards.forEach((s, r) => a.set(s, r * M * K + r * (M / RANKS) * K));
    const b = new Float32Array(RANKS * K * N);
    weights.forEach((w, r) => b.set(w, r * K * N));
    const [A, B, C] = [own('A', a), own('B', b), own('C', new Float32Array(RANKS * M * N))];
    await program.run({ A, B, C });
    const c = await C.read();
    c.forEach((x, r) => expect(Array.from(x)).toEqual(Array.from(reference(r))));
    expect(() => group.wrap(program.spec('C'), [device.createBuffer({ size: 64, usage })])).toThrow(/at least 32768 bytes on device 0/);
    expect(() => group.wrap(program.spec('C'), [device.createBuffer({ size: bytes('C'), usage: GPUBufferUsage.STORAGE })])).toThrow(/STORAGE \| COPY_SRC \| COPY_DST/);
    const buffer = C.buffer(0);
    group.close();
    // The group is closed; your buffers are still yours.
    expect(buffer.size).toBe(bytes('C'));
    buffer.destroy();
    handles[0]!.device.queue.submit([]);
  });
});
