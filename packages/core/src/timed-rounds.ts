/**
 * Parts timed in rounds (bench.ts, benchVariantsInTurn): each round runs every part once, in an order
 * shuffled per round from a fixed seed, so that no part always follows the same one, and a round
 * takes milliseconds, far less than a clock change: the ratio of two parts in one round compares them
 * at one clock state.
 */
import { mulberry32, shuffled } from './workloads/random.js';

/** A part: one run, its milliseconds. */
export type TimedPart = () => Promise<number>;

export interface RoundsOptions {
  readonly runs: number;
  /** Rounds run first in the parts' own order, not recorded. */
  readonly warmup: number;
  /** After each recorded round, given its milliseconds (bench.ts keeps the GPUs busy then). */
  readonly between?: (roundMs: number) => Promise<void>;
}

/**
 * Each part's times, round by round. A recorded round opens with an untimed run of its first part:
 * over two devices the part that ran first after the busy kernel between rounds took 13–20% longer
 * than where it came later (the median over 24 rows of three calls on two H200s, benchmarks/README.md,
 * 2026-11-27), so a part's time hung on its place, and a ratio of two parts on which one went first.
 */
export async function timeInRounds(parts: ReadonlyMap<string, TimedPart>, o: RoundsOptions): Promise<Map<string, number[]>> {
  const names = [...parts.keys()];
  const times = new Map(names.map((name) => [name, [] as number[]]));
  const runRound = async (order: readonly string[], record: boolean) => {
    if (record) await parts.get(order[0]!)!();
    let ms = 0;
    for (const name of order) {
      const t = await parts.get(name)!();
      if (record) times.get(name)!.push(t);
      ms += t;
    }
    return ms;
  };
  for (let i = 0; i < o.warmup; i++) await runRound(names, false);
  const random = mulberry32(o.runs);
  for (let round = 0; round < o.runs; round++) {
    const ms = await runRound(shuffled(names, random), true);
    await o.between?.(ms);
  }
  return times;
}
