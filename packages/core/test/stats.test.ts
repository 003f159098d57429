import { describe, expect, it } from 'vitest';
import { summarize, warmUntilSettled } from '../src/stats.js';

describe('summarize', () => {
  it('gives the median (mean of the middle two for an even count), min, max and count', () => {
    expect(summarize([3, 1, 4, 1])).toEqual({ median: 2, min: 1, max: 4, runs: 4 });
    expect(summarize([])).toEqual({ median: NaN, min: NaN, max: NaN, runs: 0 });
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
});
