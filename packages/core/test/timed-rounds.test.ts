import { describe, expect, it } from 'vitest';
import { roundOrders, timeInRounds, type TimedPart } from '../src/tools/timed-rounds.js';

/** Parts whose run right after the pause between rounds is slow, as the first after the busy kernel was on two H200s. */
function partsSlowAfterPause(names: readonly string[]) {
  let paused = true;
  const calls: string[] = [];
  const parts = new Map<string, TimedPart>(
    names.map((name, i) => [
      name,
      async () => {
        calls.push(name);
        const ms = (i + 1) * (paused ? 1.5 : 1);
        paused = false;
        return ms;
      },
    ]),
  );
  return { parts, calls, pause: async () => void (paused = true) };
}

describe('timeInRounds', () => {
  it('records every part once a round, each round in a shuffled order after an untimed run of its first part', async () => {
    const { parts, calls, pause } = partsSlowAfterPause(['a', 'b', 'c']);
    const { times, orders } = await timeInRounds(parts, { runs: 12, warmup: 1, between: pause });
    // no recorded time is a run right after the pause: each part's own, every round
    expect(times.get('a')).toEqual(Array(12).fill(1));
    expect(times.get('b')).toEqual(Array(12).fill(2));
    expect(times.get('c')).toEqual(Array(12).fill(3));
    // warm-up in the parts' order, then four runs a round, the first repeated
    expect(calls.slice(0, 3)).toEqual(['a', 'b', 'c']);
    expect(calls).toHaveLength(3 + 12 * 4);
    const rounds = Array.from({ length: 12 }, (_, r) => calls.slice(3 + 4 * r, 7 + 4 * r));
    for (const round of rounds) {
      expect(round[0]).toBe(round[1]);
      expect([...round.slice(1)].sort()).toEqual(['a', 'b', 'c']);
    }
    // shuffled: not every round in one order; the orders returned are those run, and roundOrders'
    expect(new Set(rounds.map((r) => r.join())).size).toBeGreaterThan(1);
    expect(orders).toEqual(rounds.map((r) => r.slice(1)));
    expect(roundOrders(['a', 'b', 'c'], 12)).toEqual(orders);
  });

  it('hands each round its recorded milliseconds', async () => {
    const { parts } = partsSlowAfterPause(['a', 'b']);
    const seen: number[] = [];
    await timeInRounds(parts, { runs: 3, warmup: 0, between: async (ms) => void seen.push(ms) });
    expect(seen).toEqual([3, 3, 3]);
  });
});
