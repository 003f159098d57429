/**
 * f16 tensors whose chunks start or end mid-word (odd row lengths, odd row counts) crossing devices
 * (issue 44): the runs are widened to whole words where that is safe (backends'
 * placement/aligned-transfers.ts), the rest refused with a UsageError before any device is touched.
 * The GPU cases are the issue's failing commands shrunk to the same odd-row paths, two devices from
 * the software adapter, each checked against the CPU reference.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunkTransfer, placedTransfers, TransferAlignmentError } from '@syncopate/backends';
import { openDevices, type DeviceHandle } from '@syncopate/runtime';
import { runWorkload, type LoweredWorkload } from '../src/tools/run.js';
import { UsageError } from '../src/workloads/index.js';
import type { RunOptions } from '../src/tools/run-report.js';

const base = { dtype: 'f16', backend: 'auto', seed: 3, order: 'chunk-arrival', devices: 2 } as const;

/** The kernels `o` lowers to over two devices, without opening one (the run stops at onLowered). */
async function lowered(o: RunOptions): Promise<LoweredWorkload> {
  let result: LoweredWorkload | undefined;
  const stop = new Error('lowered');
  const fake = [{}, {}] as unknown as DeviceHandle[];
  await expect(runWorkload({ ...o, handles: fake, codegen: { target: 'simt' }, onLowered: (l) => ((result = l), Promise.reject(stop)) })).rejects.toBe(stop);
  return result!;
}

/** How many of the chunks crossing devices have a run that starts or ends mid-word. */
function midWordChunks({ module, placed }: LoweredWorkload): number {
  const tensors = placed.devices[0]!.kernel.tensors;
  return [...placedTransfers(module, placed).keys()].filter((i) => {
    const c = module.chunks[i]!;
    return chunkTransfer(c, i, tensors.find((t) => t.name === c.tensor)!).runs.some((r) => r.offset % 4 !== 0 || r.bytes % 4 !== 0);
  }).length;
}

const cases: RunOptions[] = [
  // `run a2a-gemm --ranks 8 --devices 2 --m 41 --n 77 --k 115 --dtype f16`, shrunk: token rows of 15 f16.
  { ...base, workload: 'a2a-gemm', ranks: 4, shape: { m: 21, n: 13, k: 15 } },
  // `run ag-gemm --ranks 6 --devices 2 --m 304 --n 286 --k 493 --dtype f16 --gather one-shot --order column-major`, shrunk.
  { ...base, workload: 'ag-gemm', ranks: 6, shape: { m: 18, n: 8, k: 15 }, gather: 'one-shot', order: 'column-major' },
  // A ring forwards chunks read before their neighbours are final: the later transfer must write last.
  { ...base, workload: 'ag-gemm', ranks: 4, shape: { m: 40, n: 24, k: 37 }, gather: 'ring', chunksPerRank: 2 },
];

describe('f16 chunks that start or end mid-word, over two devices', () => {
  it.each(cases)('$workload ranks=$ranks $shape.m x $shape.n x $shape.k: every crossing run widened to whole words', async (o) => {
    const l = await lowered(o);
    expect(midWordChunks(l)).toBeGreaterThan(0);
    for (const t of placedTransfers(l.module, l.placed).values()) for (const r of t.runs) expect([r.offset % 4, r.bytes % 4]).toEqual([0, 0]);
  });

  it('refuses a run whose widening would overwrite a live rank (an odd element count a rank): UsageError, no device touched', async () => {
    // 21·15 f16 a rank: rank 2's copy ends mid-word, and rank 3's, live on device 1, begins in that word.
    const o: RunOptions = { ...base, workload: 'ag-gemm', ranks: 6, shape: { m: 21, n: 8, k: 15 }, gather: 'ring' };
    const l = await lowered(o);
    expect(() => placedTransfers(l.module, l.placed)).toThrow(TransferAlignmentError);
    const fake = [{}, {}] as unknown as DeviceHandle[];
    const run = runWorkload({ ...o, handles: fake, codegen: { target: 'simt' } });
    await expect(run).rejects.toThrow(UsageError);
    await expect(run).rejects.toThrow(/WebGPU copies whole 4-byte words.*rank 3's own copy on device 1.*give @A an even row length/);
  });
});

describe('f16 odd rows across two devices of the software adapter, against the CPU reference', () => {
  let handles: DeviceHandle[];
  beforeAll(async () => {
    handles = await openDevices(2, { gpus: [], device: { requiredLimits: 'adapter-max' } });
  });
  afterAll(() => handles?.forEach((h) => h.close()));

  // Inputs are small integers (exact in f16) and the dots accumulate in f32: the answer is exact.
  it.each(cases)('$workload ranks=$ranks $shape.m x $shape.n x $shape.k gather=$gather', async (o) => {
    // A cold shader compile on a busy 2-core machine can take tens of seconds.
    const report = await runWorkload({ ...o, handles, timedRuns: 1, timeoutMs: 110_000 });
    expect(report.devices).toBe(2);
    expect(report.maxAbsError).toBe(0);
    expect(report.verified).toBe(true);
  }, 240_000);
});
