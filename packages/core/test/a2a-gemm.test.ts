// All-to-All + expert GEMM (MoE dispatch) fused on the software adapter: each rank multiplies the rows
// it receives, reading its own range through rank_id and waiting only for the chunks that land there.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { a2aGemmKernel } from '@syncopate/ir';
import { allToAll, allToAllLayout } from '@syncopate/passes';
import type { DeviceHandle } from '@syncopate/runtime';
import { compileOrThrow } from '../src/api/compile.js';
import { lowerToWgsl, openDevice, runFused } from '../src/tools/run.js';

let device: DeviceHandle;
beforeAll(async () => {
  device = await openDevice();
});
afterAll(() => device?.close());

describe('a2a-gemm', () => {
  it('every rank computes its received rows times its expert weights, exactly', async () => {
    const R = 3;
    const rowsPerRank = 64;
    const hidden = 32;
    const out = 32;
    // Uneven per pair; every destination receives 64 rows.
    const splits = [
      [16, 32, 16],
      [32, 16, 16],
      [16, 16, 32],
    ];
    const rows = R * rowsPerRank;
    const kernel = a2aGemmKernel({ ranks: R, rowsPerRank, hidden, out });
    const plan = allToAll({ ranks: R, tensor: { name: 'T', shape: [rows, hidden] }, axis: 0, splits });
    const fused = lowerToWgsl(compileOrThrow(kernel, plan, { passOptions: { 'reorder-tiles': { order: 'chunk-arrival' } } }));

    const { offsets } = allToAllLayout(splits);
    const value = (r: number, i: number) => ((i * 7 + r * 3) % 5) - 2;
    // Rank r holds the rows it sends (its own kept rows included), zeros elsewhere.
    const T = Array.from({ length: R }, (_, r) => {
      const t = new Float32Array(rows * hidden);
      for (let d = 0; d < R; d++) {
        for (let i = offsets[r]![d]!; i < offsets[r]![d]! + splits[r]![d]!; i++) {
          for (let c = 0; c < hidden; c++) t[i * hidden + c] = value(r, i * hidden + c);
        }
      }
      return t;
    });
    const W = Array.from({ length: R }, (_, r) => Float32Array.from({ length: hidden * out }, (_, i) => value(r + 5, i)));
    const Y = Array.from({ length: R }, () => new Float32Array(rows * out));
    const { tensors } = await runFused(device, fused, { T, W, Y }, ['Y']);

    // The source of each row of the dispatched layout.
    const sourceOf = (i: number) => {
      for (let r = 0; r < R; r++) for (let d = 0; d < R; d++) if (i >= offsets[r]![d]! && i < offsets[r]![d]! + splits[r]![d]!) return r;
      throw new Error(`row ${i} belongs to no split`);
    };
    let worst = 0;
    for (let d = 0; d < R; d++) {
      for (let i = d * rowsPerRank; i < (d + 1) * rowsPerRank; i++) {
        const src = sourceOf(i);
        for (let j = 0; j < out; j++) {
          let s = 0;
          for (let c = 0; c < hidden; c++) s += T[src]![i * hidden + c]! * W[d]![c * out + j]!;
          worst = Math.max(worst, Math.abs(s - tensors.Y![d]![i * out + j]!));
        }
      }
    }
    expect(worst).toBe(0);
  }, 120_000);
});
