/** Median and spread of repeated timings (from core). */
import { summarize, type Summary } from '@syncopate/core';

export { summarize, type Summary };

/** `fn` run `warmup` times untimed, then `runs` times, each timed on the host's clock alone. */
export async function timeEach(runs: number, warmup: number, fn: () => Promise<unknown>) {
  for (let i = 0; i < warmup; i++) await fn();
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn();
    ms.push(performance.now() - t);
  }
  return summarize(ms);
}
