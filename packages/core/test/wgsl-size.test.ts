/**
 * The generated code does not grow with the plan: waits and arrives are loops over rows of the tables
 * buffer (backends gpu-signal/barrier-table.ts), not a guarded block per chunk. Before, a2a-gemm at 8
 * ranks and 4 chunks a rank was 275 KB of WGSL (81 KB at 1), and ag-gemm's grew with the square of the
 * ranks, 2.3 MB at 64. Sizes only: the times are benchmarks/src/wgsl-size.ts's. Nor does it change
 * with the plan: the plan's sizes and offsets are the tables' header's (backends wgsl/tables.ts).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { compileOrThrow, getWorkload, lowerToWgsl, WORKLOAD_NAMES, type WorkloadName, type WorkloadOptions } from '../src/index.js';

function wgslOf(workload: WorkloadName, options: Partial<WorkloadOptions> & { ranks: number }, order?: 'column-major'): string {
  const w = getWorkload(workload);
  const built = w.build({ shape: w.defaults, dtype: 'f32', ...options });
  const compiled = compileOrThrow(built.kernel, built.plan, order ? { passOptions: { 'reorder-tiles': { order } } } : {});
  return lowerToWgsl(compiled, { target: 'simt' }).wgsl;
}

const wgslBytes = (...args: Parameters<typeof wgslOf>): number => wgslOf(...args).length;

const hash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 12);

/** The gather or reduction variants a workload has (none: its default plan only). */
const variants: Record<WorkloadName, readonly Partial<WorkloadOptions>[]> = {
  'ag-gemm': [{ gather: 'ring' }, { gather: 'one-shot' }],
  'ring-attn': [{ gather: 'ring' }, { gather: 'one-shot' }],
  'gemm-rs': [{ reduction: 'ring' }, { reduction: 'one-shot' }],
  'gemv-ar': [{ reduction: 'ring' }, { reduction: 'one-shot' }],
  'a2a-gemm': [{}],
  'embed-a2a': [{}],
};

describe('one kernel text for every chunk count', () => {
  // Each workload's tensors (and a merged reduce-add's member rounds) may change with the rank count;
  // for a given rank count, the text is the same at 1, 2 and 4 chunks a rank.
  it.each(WORKLOAD_NAMES)('%s: byte-identical WGSL at 1, 2 and 4 chunks a rank, at 4 and 8 ranks', (workload) => {
    for (const variant of variants[workload]) {
      for (const ranks of [4, 8]) {
        const texts = [1, 2, 4].map((chunksPerRank) => wgslOf(workload, { ranks, chunksPerRank, ...variant }));
        expect(texts.map(hash), `${workload} ${JSON.stringify(variant)} at ${ranks} ranks`).toEqual(texts.map(() => hash(texts[0]!)));
      }
    }
  });

  // ag-gemm's tensors are the same at every rank count: so is its text.
  it('ag-gemm: byte-identical WGSL at 2, 4, 8 and 16 ranks', () => {
    const texts = [2, 4, 8, 16].flatMap((ranks) => [1, 4].map((chunksPerRank) => wgslOf('ag-gemm', { ranks, chunksPerRank })));
    expect(new Set(texts).size).toBe(1);
  });
});

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
