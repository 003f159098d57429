/**
 * The tp-layer check over processes: each process's error over its own ranks, combined over the job,
 * gives exactly the error (and so the verdict) of one process checking every rank.
 */
import { describe, expect, it } from 'vitest';
import type { RankProcesses } from '../src/api/processes.js';
import { combineLayerErrors, layerError, type LayerError } from '../src/layers/check.js';
import { layerErrorOver } from '../src/tools/tp-layer-runner.js';

/** Seeded values in [−2, 2). */
function values(seed: number, n: number): Float32Array {
  let s = seed;
  return Float32Array.from({ length: n }, () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 4 - 2);
}

const RANKS = 4;
const actual = Array.from({ length: RANKS }, (_, r) => values(r + 1, 64));
const expected = actual.map((a, r) => a.map((x, i) => x + (i === r * 7 ? 1e-3 * (r + 1) : 0)));

/** layerError over each set of ranks, combined. */
function split(got: readonly Float32Array[], want: readonly Float32Array[], sets: readonly (readonly number[])[]): LayerError {
  return combineLayerErrors(sets.map((ranks) => layerError(ranks.map((r) => got[r]!), ranks.map((r) => want[r]!))));
}

describe('combineLayerErrors', () => {
  it.each([[[[0, 1], [2, 3]]], [[[0], [1, 2, 3]]], [[[0], [1], [2], [3]]], [[[3, 0], [1], [2]]]])('gives layerError over every rank exactly: ranks split as %j', (sets) => {
    expect(split(actual, expected, sets)).toEqual(layerError(actual, expected));
  });

  it('carries a NaN in any piece, in the output or in the answer', () => {
    const bad = actual.map((a, r) => (r === 3 ? Float32Array.from(a, (x, i) => (i === 5 ? NaN : x)) : a));
    const whole = layerError(bad, expected);
    const pieces = split(bad, expected, [[0, 1], [2, 3]]);
    expect(whole.relative).toBeNaN();
    expect(pieces.maxAbs).toBeNaN();
    expect(pieces.relative).toBeNaN();
    const badAnswer = expected.map((a, r) => (r === 0 ? Float32Array.from(a, (x, i) => (i === 2 ? NaN : x)) : a));
    expect(split(actual, badAnswer, [[0, 1], [2, 3]])).toEqual(layerError(actual, badAnswer));
  });

  it('refuses no pieces', () => {
    expect(() => combineLayerErrors([])).toThrow(RangeError);
  });
});

/** A job of `others.length + 1` processes, this one first, whose allGather hands back the others' [maxAbs, scale]. */
function job(others: readonly LayerError[]): RankProcesses {
  const bytes = (e: LayerError) => new Uint8Array(Float64Array.of(e.maxAbs, e.scale).buffer);
  return { rank: 0, size: others.length + 1, allGather: async (data: Uint8Array) => [data, ...others.map(bytes)] } as unknown as RankProcesses;
}

describe('layerErrorOver', () => {
  it('combines every process’s error through allGather: the verdict of one process checking every rank', async () => {
    const mine = layerError(actual.slice(0, 2), expected.slice(0, 2));
    const theirs = layerError(actual.slice(2), expected.slice(2));
    expect(await layerErrorOver(job([theirs]), mine)).toEqual(layerError(actual, expected));
    expect(await layerErrorOver(job([mine]), theirs)).toEqual(layerError(actual, expected));
  });

  it('is NaN where another process saw a NaN', async () => {
    const mine = layerError(actual.slice(0, 2), expected.slice(0, 2));
    expect((await layerErrorOver(job([{ maxAbs: NaN, scale: 1, relative: NaN }]), mine)).relative).toBeNaN();
  });
});
