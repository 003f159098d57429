import { describe, expect, it } from 'vitest';
import { placeRanks } from '@syncopate/runtime';
import { fitParams, predict, workloadGeometry, type WorkloadGeometry } from '../src/cost-model.js';
import { getWorkload } from '../src/workloads/index.js';

const params = { tileMs: 0.01, latencyMs: 0.05, bytesPerMs: 1e6, dispatchMs: 0.02 };

describe('cost model', () => {
  it('reads tiles, bytes per step and direction from a workload', () => {
    const o = { ranks: 4, shape: { m: 256, n: 128, k: 64 }, dtype: 'f32' as const };
    const ag = getWorkload('ag-gemm').build(o);
    const g = workloadGeometry(ag.kernel, ag.plan, placeRanks(4, 1));
    // 64x64 tiles: 4x2 per rank, 4 ranks on the one device.
    expect(g.tiles).toBe(4 * 8);
    // A ring all-gather: 3 steps, each brings every rank one 64x64 f32 shard.
    expect(g.stepBytes).toEqual([4, 4, 4].map((r) => r * 64 * 64 * 4));
    expect(g.direction).toBe('before');
    const rs = getWorkload('gemm-rs').build(o);
    expect(workloadGeometry(rs.kernel, rs.plan, placeRanks(4, 1)).direction).toBe('after');
    // On two devices each receives the chunks of its two ranks.
    expect(workloadGeometry(ag.kernel, ag.plan, placeRanks(4, 2)).stepBytes[0]).toBe(2 * 64 * 64 * 4);
  });

  it('pipelines steps before the tiles: communication hidden when compute is longer', () => {
    // 3 steps of 0.05 + 0.1 ms; 40 tiles = 0.4 ms in 4 groups of 0.1 ms.
    const g: WorkloadGeometry = { tiles: 40, stepBytes: [1e5, 1e5, 1e5], direction: 'before' };
    const p = predict(g, params);
    expect(p.computeOnly).toBeCloseTo(0.4);
    expect(p.commOnly).toBeCloseTo(0.45);
    expect(p.sequential).toBeCloseTo(0.85);
    // Group 0 at 0–0.1; then each group waits for its step: 0.15+0.1, 0.3+0.1, 0.45+0.1.
    expect(p.fused).toBeCloseTo(0.55);
    // Boundaries do not delay groups that wait for data anyway.
    expect(p.decomposed).toBeCloseTo(0.55);
    // With cheap communication, the boundaries are what is left.
    const fast = predict({ ...g, stepBytes: [0, 0, 0] }, { ...params, latencyMs: 0 });
    expect(fast.fused).toBeCloseTo(0.4);
    expect(fast.decomposed).toBeCloseTo(0.4 + 3 * 0.02);
  });

  it('pipelines steps after the tiles for reductions', () => {
    const g: WorkloadGeometry = { tiles: 40, stepBytes: [1e5, 1e5, 1e5], direction: 'after' };
    const p = predict({ ...g }, { ...params, dispatchMs: 0 });
    // Stored at 0.1, 0.2, 0.3; sends of 0.15 each chain from 0.1: done at 0.55; last group ends at 0.4.
    expect(p.fused).toBeCloseTo(0.55);
    expect(p.sequential).toBeCloseTo(0.85);
  });

  it('fits latency and bandwidth back from measurements it generated', () => {
    const geometries: WorkloadGeometry[] = [
      { tiles: 10, stepBytes: [2e5], direction: 'before' },
      { tiles: 10, stepBytes: [1e5, 1e5, 1e5, 1e5], direction: 'before' },
      { tiles: 20, stepBytes: [5e5, 5e5], direction: 'before' },
    ];
    const samples = geometries.map((geometry) => ({ geometry, computeOnlyMs: predict(geometry, params).computeOnly, commOnlyMs: predict(geometry, params).commOnly }));
    const fitted = fitParams(samples);
    expect(fitted.tileMs).toBeCloseTo(params.tileMs);
    expect(fitted.latencyMs).toBeCloseTo(params.latencyMs);
    expect(fitted.bytesPerMs / params.bytesPerMs).toBeCloseTo(1);
    expect(() => fitParams([])).toThrow(RangeError);
  });
});
