/**
 * Golden IR tests, in the habit of Triton's lit tests: each case is a kernel in the textual IR, a plan,
 * and the IR expected after each Syncopate pass, kept in test/golden/<case>.<pass>.sir.
 * `UPDATE_GOLDEN=1 pnpm test` rewrites the expected files; review their diff before committing.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { a2aGemmKernel, gemmKernel, parse, print, type ChunkPlan, type Module } from '@syncopate/ir';
import { alignChunksPass } from '../src/align-chunks.js';
import { attachPlan } from '../src/attach-plan.js';
import { insertBarriers } from '../src/insert-barriers.js';
import { runPipeline } from '../src/manager.js';
import { reorderTiles } from '../src/reorder-tiles.js';
import { allToAll, ringAllGather, ringReduceScatter, oneShotAllGather } from '../src/templates/index.js';

const dir = join(import.meta.dirname, 'golden');
const update = process.env.UPDATE_GOLDEN === '1';

interface Case {
  readonly name: string;
  readonly kernel: Module;
  readonly plan: ChunkPlan;
  readonly options?: Record<string, unknown>;
}

/** Splits every chunk of a plan in two along axis 1, so tiles meet chunks inside the K loop. */
function splitAlongK(plan: ChunkPlan, at: number): ChunkPlan {
  return {
    ...plan,
    chunks: plan.chunks.flatMap((c) => [
      { ...c, region: { lo: c.region.lo, hi: [c.region.hi[0]!, at] } },
      { ...c, region: { lo: [c.region.lo[0]!, at], hi: c.region.hi } },
    ]),
  };
}

const agKernel = gemmKernel({ m: 256, n: 128, k: 128 }, { ranks: 4, distribute: 'ag', name: 'ag_gemm' });
const cases: Case[] = [
  {
    name: 'ag-gemm',
    kernel: agKernel,
    plan: ringAllGather({ ranks: 4, tensor: { name: 'A', shape: [256, 128] }, axis: 0 }),
  },
  {
    // 32-row chunks under 64-row tiles: every tile waits on two chunks of one shard.
    name: 'ag-gemm-fine-chunks',
    kernel: gemmKernel({ m: 128, n: 64, k: 64 }, { ranks: 2, distribute: 'ag', name: 'ag_gemm' }),
    plan: ringAllGather({ ranks: 2, tensor: { name: 'A', shape: [128, 64] }, axis: 0, chunksPerRank: 2 }),
  },
  {
    // Chunks split along K: the waits stay in the reduction loop, guarded by the loop variable.
    name: 'ag-gemm-k-chunks',
    kernel: gemmKernel({ m: 128, n: 64, k: 64 }, { ranks: 2, distribute: 'ag', name: 'ag_gemm' }),
    plan: splitAlongK(oneShotAllGather({ ranks: 2, tensor: { name: 'A', shape: [128, 64] }, axis: 0 }), 32),
    options: { 'reorder-tiles': { order: 'grouped', groupSize: 2 } },
  },
  {
    // MoE dispatch: uneven splits per pair, 64 rows received by every rank; each rank's expert GEMM
    // reads its own range (through rank_id) and waits only for the chunks that land there.
    name: 'a2a-gemm',
    kernel: a2aGemmKernel({ ranks: 3, rowsPerRank: 64, hidden: 32, out: 32 }),
    plan: allToAll({ ranks: 3, tensor: { name: 'T', shape: [192, 32] }, axis: 0, splits: [[16, 32, 16], [32, 16, 16], [16, 16, 32]] }),
  },
  {
    name: 'gemm-rs',
    kernel: gemmKernel({ m: 256, n: 128, k: 64 }, { ranks: 4, distribute: 'rs', name: 'gemm_rs' }),
    plan: ringReduceScatter({ ranks: 4, tensor: { name: 'C', shape: [256, 128] }, axis: 0 }),
  },
];

const passes = [attachPlan, alignChunksPass, reorderTiles, insertBarriers];

describe.each(cases)('golden IR: $name', ({ name, kernel, plan, options }) => {
  // IR in: the case starts from its textual form, as a lit test does.
  const input = print(kernel);
  const result = runPipeline(passes, parse(input), { plan, options: options ?? {} }, { printAfter: 'all' });
  if (E.isLeft(result)) throw new Error(result.left.map((d) => d.message).join('\n'));

  it.each(passes.map((p) => p.name))('IR after %s', (pass) => {
    const file = join(dir, `${name}.${pass}.sir`);
    const actual = result.right.dumps.find((d) => d.pass === pass)!.ir;
    if (update) writeFileSync(file, actual);
    expect(existsSync(file), `${file} is missing: run UPDATE_GOLDEN=1 pnpm test`).toBe(true);
    expect(actual).toBe(readFileSync(file, 'utf8'));
    // IR out parses back to itself.
    expect(print(parse(actual))).toBe(actual);
  });
});
