/** Median and spread of repeated timings. */
export interface Summary {
  readonly median: number;
  /** NaN where the runs were timed only together (no per-run spread). */
  readonly min: number;
  readonly max: number;
  readonly runs: number;
}

/** `perRun: false`: the samples are one batch's mean repeated, so min and max would be made up: NaN. */
export function summarize(samples: readonly number[], perRun = true): Summary {
  if (!perRun) return { ...summarize(samples), min: NaN, max: NaN };
  const s = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  const median = s.length === 0 ? NaN : s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { median, min: s[0] ?? NaN, max: s[s.length - 1] ?? NaN, runs: s.length };
}

/** Warm-up batches at most once the GPU has been busy long enough: bounded should they never settle. */
const MAX_WARMUP_BATCHES = 8;
/** A warm-up batch whose median is within this of the previous one's means the clocks have settled. */
const SETTLED = 0.02;
/** Busy GPU time benchmarks ask for before the settled check: an H100 idles at 345 MHz after a host gap of a second. */
export const WARMUP_BUSY_MS = 1000;
/** Batches of the busy phase at most (a batch of zero-time runs would never add up). */
const MAX_BUSY_BATCHES = 1000;

/** WARMUP_BUSY_MS on GPUs, none on a software adapter (whose clocks do not idle, and where a second is many runs). */
export function warmupBusyMsFor(devices: readonly { readonly placement: { readonly kind: string } }[]): number {
  return devices.every((d) => d.placement.kind === 'software') ? 0 : WARMUP_BUSY_MS;
}

/**
 * Runs `step` (which gives the milliseconds it took) at least `minSteps` times and until those add up
 * to `busyMs`, at most `maxSteps` times (bounded, however short a step is): time that keeps a GPU at
 * the clocks its load gives.
 */
export async function keepBusy(step: () => Promise<number>, busyMs: number, minSteps: number, maxSteps: number): Promise<void> {
  let busy = 0;
  for (let i = 0; i < maxSteps && (i < minSteps || busy < busyMs); i++) busy += await step();
}

/**
 * Runs `batch` (a batch of timed runs, their times) until the GPU has been busy `busyMs` (the sum of
 * the batches' times; GPU benchmarks pass WARMUP_BUSY_MS, tests on a software adapter need none), then until two batches in a row agree within 2%, at most 8 more times. The
 * H100 drops to idle clocks in the host gaps between variants (a CPU check, a compile), and two short
 * batches of sub-millisecond runs then agree at those clocks: the same kernel was timed up to 2.6x
 * apart (benchmarks/gemm.md). A second of busy GPU first raises the clocks whatever the batch size.
 */
export async function warmUntilSettled(batch: () => Promise<readonly number[]>, busyMs = 0): Promise<void> {
  await keepBusy(async () => (await batch()).reduce((a, b) => a + b, 0), busyMs, 0, MAX_BUSY_BATCHES);
  let previous = NaN;
  for (let i = 0; i < MAX_WARMUP_BATCHES; i++) {
    const median = summarize(await batch()).median;
    if (Math.abs(median - previous) <= SETTLED * previous) return;
    previous = median;
  }
}
