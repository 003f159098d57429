/**
 * Parts timed in rounds (bench.ts, benchVariantsInTurn): each round runs every part once, in an order
 * shuffled per round from a fixed seed, so that no part always follows the same one, and a round
 * takes milliseconds, far less than a clock change: the ratio of two parts in one round compares them
 * at one clock state.
 */
import { mulberry32, shuffled } from '../workloads/random.js';

/** A part: one run, its milliseconds. */
export type TimedPart = () => Promise<number>;

export interface RoundsOptions {
  readonly runs: number;
  /** Rounds run first in the parts' own order, not recorded. */
  readonly warmup: number;
  /** After each recorded round, given its milliseconds (bench.ts keeps the GPUs busy then). */
  readonly between?: (roundMs: number) => Promise<void>;
}

/** The order of each of `runs` recorded rounds: `names` shuffled from a seed of `runs`. */
export function roundOrders(names: readonly string[], runs: number): string[][] {
  const random = mulberry32(runs);
  return Array.from({ length: runs }, () => shuffled(names, random));
}

/**
 * Each part's times, round by round, and the rounds' orders. A recorded round opens with an untimed
 * run of its first part: over two devices the part that ran first after the busy kernel between rounds
 * took 13–20% longer than where it came later (the median over 24 rows of three calls on two H200s:
 * `node dist/round-positions.mjs` on benchmarks/results/2gpu-2026-11-27o/call1–call3/suite.jsonl;
 * benchmarks/README.md, Method notes), so a part's time hung on its place, and a ratio of two parts on
 * which one went first.
 */
export async function timeInRounds(parts: ReadonlyMap<string, TimedPart>, o: RoundsOptions): Promise<{ times: Map<string, number[]>; orders: string[][] }> {
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
  const orders = roundOrders(names, o.runs);
  for (const order of orders) {
    const ms = await runRound(order, true);
    await o.between?.(ms);
  }
  return { times, orders };
}
