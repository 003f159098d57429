import { describe, expect, it } from 'vitest';
import { summarize, WARMUP_BUSY_MS, warmUntilSettled, warmupBusyMsFor } from '../src/tools/stats.js';
import { rowSample } from '../src/tools/run.js';

describe('summarize', () => {
  it('gives the median (mean of the middle two for an even count), min, max and count', () => {
    expect(summarize([3, 1, 4, 1])).toEqual({ median: 2, min: 1, max: 4, runs: 4 });
    expect(summarize([])).toEqual({ median: NaN, min: NaN, max: NaN, runs: 0 });
  });

  it('shows no spread for runs timed only as a batch (their samples are the batch mean repeated)', () => {
    expect(summarize([2, 2, 2], false)).toEqual({ median: 2, min: NaN, max: NaN, runs: 3 });
  });
});

describe('rowSample', () => {
  it('keeps about the asked number of rows, one per stride, each at a different offset within it', () => {
    const kept = Array.from({ length: 4096 }, (_, r) => r).filter(rowSample(4096, 16));
    expect(kept.length).toBe(16);
    expect(new Set(kept.map((r) => r % 256)).size).toBe(16);
    expect(Array.from({ length: 10 }, (_, r) => r).filter(rowSample(10, 64))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });
});

describe('warmUntilSettled', () => {
  /** A batch function returning the given medians in turn, counting its calls. */
  const batches = (medians: number[]) => {
    let calls = 0;
    return { batch: async () => [medians[Math.min(calls++, medians.length - 1)]!], calls: () => calls };
  };

  it('stops at the first batch within 2% of the one before (clocks rising from idle)', async () => {
    const b = batches([30, 12, 10, 10.1, 10]);
    await warmUntilSettled(b.batch);
    expect(b.calls()).toBe(4);
  });

  it('gives up after 8 batches when the times never settle', async () => {
    const b = batches([1, 2, 1, 2, 1, 2, 1, 2, 1, 2]);
    await warmUntilSettled(b.batch);
    expect(b.calls()).toBe(8);
  });

  it('keeps the GPU busy for a second first, however short the batches (idle clocks agree too)', async () => {
    const b = batches([100]);
    await warmUntilSettled(b.batch, WARMUP_BUSY_MS);
    // 10 batches of 100 ms make the second of busy time, then two that agree.
    expect(b.calls()).toBe(12);
  });

  it('stops the busy phase of zero-time batches after a bounded count', async () => {
    const b = batches([0]);
    await warmUntilSettled(b.batch, WARMUP_BUSY_MS);
    expect(b.calls()).toBe(1000 + 2);
  });
});

describe('warmupBusyMsFor', () => {
  it('keeps a GPU busy a second before timing, and a software adapter not at all', () => {
    const gpu = { placement: { kind: 'pci' } };
    const software = { placement: { kind: 'software' } };
    expect(warmupBusyMsFor([software, software])).toBe(0);
    expect(warmupBusyMsFor([gpu])).toBe(WARMUP_BUSY_MS);
    expect(warmupBusyMsFor([software, gpu])).toBe(WARMUP_BUSY_MS);
  });
});
