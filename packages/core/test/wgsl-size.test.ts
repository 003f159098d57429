/**
 * The generated code does not grow with the plan: waits and arrives are loops over rows of the tables
 * buffer (backends gpu-signal/barrier-table.ts), not a guarded block per chunk. Before, a2a-gemm at 8
 * ranks and 4 chunks a rank was 275 KB of WGSL (81 KB at 1), and ag-gemm's grew with the square of the
 * ranks, 2.3 MB at 64. Sizes only: the times are benchmarks/src/wgsl-size.ts's.
 */
import { describe, expect, it } from 'vitest';
import { compileOrThrow, getWorkload, lowerToWgsl, WORKLOAD_NAMES, type WorkloadName, type WorkloadOptions } from '../src/index.js';

function wgslBytes(workload: WorkloadName, options: Partial<WorkloadOptions> & { ranks: number }, order?: 'column-major'): number {
  const w = getWorkload(workload);
  const built = w.build({ shape: w.defaults, dtype: 'f32', ...options });
  const compiled = compileOrThrow(built.kernel, built.plan, order ? { passOptions: { 'reorder-tiles': { order } } } : {});
  return lowerToWgsl(compiled, { target: 'simt' }).wgsl.length;
}

describe('WGSL size', () => {
  it('a2a-gemm at 8 ranks: 4 chunks a rank emit at most 1.2x the WGSL of 1', () => {
    const one = wgslBytes('a2a-gemm', { ranks: 8, chunksPerRank: 1 });
    const four = wgslBytes('a2a-gemm', { ranks: 8, chunksPerRank: 4 });
    expect(four).toBeLessThanOrEqual(1.2 * one);
    // The shape whose pipeline creation timed out on an H200 (275 KB then).
    const issued = wgslBytes('a2a-gemm', { ranks: 8, shape: { m: 138, n: 126, k: 31 }, chunksPerRank: 4 }, 'column-major');
    expect(issued).toBeLessThan(40_000);
  });

  it('ag-gemm at 64 ranks is under 100 KB (2.3 MB before)', () => {
    expect(wgslBytes('ag-gemm', { ranks: 64 })).toBeLessThan(100_000);
  });

  // From 8 ranks: below that a merged reduce-add's move reads fewer members a round (all of them,
  // up to 8: emit-signal.ts), which is code that grows up to a bound, not with the plan.
  it.each(WORKLOAD_NAMES)('%s: neither 4 chunks a rank nor 32 ranks grow it by more than 1.2x over 1 chunk at 8 ranks', (workload) => {
    const base = wgslBytes(workload, { ranks: 8, chunksPerRank: 1 });
    expect(wgslBytes(workload, { ranks: 8, chunksPerRank: 4 })).toBeLessThanOrEqual(1.2 * base);
    expect(wgslBytes(workload, { ranks: 32, chunksPerRank: 1 })).toBeLessThanOrEqual(1.2 * base);
  });
});
