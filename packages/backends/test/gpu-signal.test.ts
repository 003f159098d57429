import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { add, buildModule, gemmKernel, mul, replicated, type ChunkPlan, type Module } from '@syncopate/ir';
import { alignChunksPass, allReduce, attachPlan, insertBarriers, oneShotAllGather, oneShotReduceScatter, reorderTiles, ringAllGather, ringReduceScatter, runPipeline } from '@syncopate/passes';
import { chunkTable, emitFusedKernel, PART_BYTES, partsStoredBy } from '../src/index.js';
import { chunkDescriptors, DESCRIPTOR_WORDS, FIELD } from '../src/gpu-signal/descriptors.js';
import { barrierRows } from './barrier-rows.js';

function lowered(kernel: Module, plan: ChunkPlan): Module {
  const r = runPipeline([attachPlan, alignChunksPass, reorderTiles, insertBarriers], kernel, { plan, options: {} });
  if (E.isLeft(r)) throw new Error(r.left.map((d) => d.message).join('\n'));
  return r.right.module;
}

const ag = (ranks: number) =>
  lowered(
    gemmKernel({ m: 128, n: 64, k: 64, blockM: 32, blockN: 32, blockK: 16 }, { ranks, distribute: 'ag', name: 'ag_gemm' }),
    ringAllGather({ ranks, tensor: { name: 'A', shape: [128, 64] }, axis: 0 }),
  );

describe('chunk table', () => {
  it('ring all-gather: step-0 chunks are ready at launch, each later one waits for the chunk it forwards', () => {
    const table = chunkTable(ag(4));
    // 32x64 regions: one part each.
    expect(table.entries.map((e) => e.parts)).toEqual(Array(12).fill(1));
    expect(table.ready).toEqual([0, 1, 2, 3]);
    expect(table.parts.map((p) => p.need)).toEqual([0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1]);
    // %c0 (rank 0 -> 1, step 0) is forwarded by rank 1 at step 1: %c5.
    expect(table.parts[0]!.dependents).toEqual([5]);
    expect(table.parts.every((p) => p.lock === -1)).toBe(true);
  });

  it('cuts large chunks into parts of about PART_BYTES, each forwarded part waiting for the part it carries', () => {
    const module = lowered(
      gemmKernel({ m: 768, n: 64, k: 256, blockM: 64, blockN: 64, blockK: 32 }, { ranks: 3, distribute: 'ag' }),
      ringAllGather({ ranks: 3, tensor: { name: 'A', shape: [768, 256] }, axis: 0 }),
    );
    const table = chunkTable(module);
    // 256 rows x 256 columns of f32 = 256 KiB: four parts of 64 rows (64 KiB each).
    expect(PART_BYTES).toBe(65536);
    expect(table.entries.map((e) => [e.parts, e.partRows])).toEqual(Array(6).fill([4, 64]));
    expect(table.parts[1]!.region).toEqual({ lo: [64, 0], hi: [128, 256] });
    expect(table.ready).toEqual([...Array(12).keys()]);
    // f16 parts are as many bytes: twice the rows.
    const half = lowered(
      gemmKernel({ m: 768, n: 64, k: 256, blockM: 64, blockN: 64, blockK: 32, dtype: 'f16' }, { ranks: 3, distribute: 'ag' }),
      ringAllGather({ ranks: 3, tensor: { name: 'A', shape: [768, 256] }, axis: 0 }),
    );
    expect(chunkTable(half).entries.map((e) => [e.parts, e.partRows])).toEqual(Array(6).fill([2, 128]));
    // Part 1 of %c0 (rows 128-255 of rank 0's shard) feeds part 1 of the chunk that forwards it.
    const forwarder = table.entries.find((e) => e.chunk.src === 1 && e.chunk.step === 1)!;
    expect(table.parts[1]!.dependents).toEqual([forwarder.firstPart + 1]);
  });

  it('ring reduce-scatter: a part waits for the tiles of both ranks that store its rows, and the part it carries on', () => {
    const module = lowered(
      gemmKernel({ m: 128, n: 64, k: 32, blockM: 32, blockN: 32, blockK: 16 }, { ranks: 4, distribute: 'rs' }),
      ringReduceScatter({ ranks: 4, tensor: { name: 'C', shape: [128, 64] }, axis: 0 }),
    );
    // Cut at the tiles (the default): each 32-row shard is one row of 2 tiles, a part each, waiting for
    // its tile on the source and on the destination, plus after step 0 the part it carries on.
    const table = chunkTable(module);
    expect(table.entries.map((e) => [e.parts, e.partRows, e.partCols])).toEqual(Array(12).fill([2, 32, 32]));
    expect(table.parts.map((p) => p.need)).toEqual([...Array(8).fill(2), ...Array(16).fill(3)]);
    const r0 = table.entries[0]!.chunk.region.lo[0]!;
    expect(table.parts[1]!.region).toEqual({ lo: [r0, 32], hi: [r0 + 32, 64] });
    const step1 = table.entries.find((e) => e.chunk.step === 1 && e.chunk.src === table.entries[0]!.chunk.dst)!;
    expect(table.parts[1]!.dependents).toEqual([step1.firstPart + 1]);
    expect(table.ready).toEqual([]);
    // One chunk lands on each (rank, shard) pair: nothing to lock.
    expect(table.parts.every((p) => p.lock === -1)).toBe(true);
    expect(table.locks).toBe(0);
    // Cut in rows: one part across the shard's width, waiting for both tiles of each side.
    const rows = chunkTable(module, undefined, 'rows');
    expect(rows.parts.map((p) => p.need)).toEqual([4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5]);
  });

  it('cut at the tiles, a tile\'s arrive counts exactly the part of its own rows and columns', () => {
    const module = lowered(
      gemmKernel({ m: 128, n: 96, k: 32, blockM: 32, blockN: 32, blockK: 16 }, { ranks: 2, distribute: 'rs' }),
      ringReduceScatter({ ranks: 2, tensor: { name: 'C', shape: [128, 96] }, axis: 0 }),
    );
    const table = chunkTable(module);
    const pidAxis = new Map(module.kernel.body.flatMap((op) => (op.op === 'program_id' ? [[op.result.id, op.axis] as const] : [])));
    for (const e of table.entries) {
      // 64 rows x 96 columns of 32x32 tiles: 2 x 3 parts.
      expect([e.parts, e.colParts]).toEqual([6, 3]);
      const lo = e.chunk.region.lo[0]! / 32;
      for (let r = 0; r < 2; r++) {
        for (let c = 0; c < 3; c++) expect(partsStoredBy(e, [lo + r, c], pidAxis)).toEqual([r * 3 + c]);
      }
      expect(partsStoredBy(e, [(lo + 2) % 4, 0], pidAxis)).toEqual([]);
    }
  });

  it('a copy whose stores name the rank is cut at the tiles too: each part counted by the one tile of the source that stores it', () => {
    // Each rank fills its own 64-row block of Y (offset 64·rank + 32·pm, as a2a-gemm's experts do);
    // rank 1 sends its block to rank 0. With the rank out of the offsets the chunk was one part, that
    // every tile counted and one workgroup moved (a2a-gemm's combine on the H100).
    const kernelWith = (kind: 'copy' | 'reduce-add', region = { lo: [64, 0], hi: [128, 64] }) =>
      lowered(
        buildModule('blocks', { ranks: 2 }, (mb) => {
          const Y = mb.tensor('Y', [128, 64], 'f32', replicated());
          mb.kernel('fill', [2, 2], (kb) => {
            const rank = kb.rankId('rank');
            const pm = kb.programId(0, 'pm');
            const pn = kb.programId(1, 'pn');
            kb.store(Y, [add(mul(rank, 64), mul(pm, 32)), mul(pn, 32)], kb.zeros([32, 32], 'f32', 'z'));
          });
        }),
        { ranks: 2, chunks: [{ tensor: 'Y', region, src: 1, dst: 0, step: 0, kind }] },
      );
    const module = kernelWith('copy');
    const table = chunkTable(module);
    const e = table.entries[0]!;
    expect([e.parts, e.colParts]).toEqual([4, 2]);
    expect(table.parts.map((p) => p.need)).toEqual([1, 1, 1, 1]);
    const pidAxis = new Map(module.kernel.body.flatMap((op) => (op.op === 'program_id' ? [[op.result.id, op.axis] as const] : [])));
    // Tile (pm, pn) of rank 1 stores rows 64 + 32·pm, columns 32·pn: part pm·2 + pn.
    for (let pm = 0; pm < 2; pm++) for (let pn = 0; pn < 2; pn++) expect(partsStoredBy(e, [pm, pn], pidAxis)).toEqual([pm * 2 + pn]);
    // The GPU counts the same parts, where the arrive runs (rank 1): the rank folded into the offset.
    const fused = emitFusedKernel(module);
    if (E.isLeft(fused)) throw new Error(fused.left.map((d) => d.message).join('\n'));
    const arrives = barrierRows(fused.right, 'ARRIVES_0', 2);
    for (let pm = 0; pm < 2; pm++) {
      for (let pn = 0; pn < 2; pn++) {
        expect(arrives.get(1)!.get(`${pm},${pn}`)).toEqual([[pm * 2 + pn, 1]]);
        expect(arrives.get(0)!.get(`${pm},${pn}`)).toEqual([]);
      }
    }
    // A reduce-add's tiles of both ends would meet different rows: it stays one part.
    expect(chunkTable(kernelWith('reduce-add')).entries[0]!.parts).toBe(1);
    // A chunk that starts inside a tile (rows 80-127) is cut on the tiles' grid, not from its first
    // row: [80, 96) and [96, 128), each one tile's, so neither waits for two tiles.
    const inside = chunkTable(kernelWith('copy', { lo: [80, 0], hi: [128, 64] }));
    expect(inside.parts.map((p) => [p.region.lo, p.region.hi])).toEqual([
      [[80, 0], [96, 32]],
      [[80, 32], [96, 64]],
      [[96, 0], [128, 32]],
      [[96, 32], [128, 64]],
    ]);
    expect(inside.parts.map((p) => p.need)).toEqual([1, 1, 1, 1]);
    expect(partsStoredBy(inside.entries[0]!, [0, 1], pidAxis)).toEqual([1]);
    expect(partsStoredBy(inside.entries[0]!, [1, 0], pidAxis)).toEqual([2]);
  });

  it('a ring all-reduce keeps row parts: its all-gather forwards regions it rewrote over what its reduce-scatter read (stale on the H100 with a part per tile)', () => {
    const module = lowered(
      gemmKernel({ m: 128, n: 64, k: 32, blockM: 32, blockN: 32, blockK: 16 }, { ranks: 4, distribute: 'rs' }),
      allReduce({ ranks: 4, tensor: { name: 'C', shape: [128, 64] }, axis: 0 }),
    );
    expect(chunkTable(module).entries.every((e) => e.colParts === 1 && e.partCols === 64)).toBe(true);
    // The reduce-scatter alone reads each region once: a part per tile.
    const rs = lowered(
      gemmKernel({ m: 128, n: 64, k: 32, blockM: 32, blockN: 32, blockK: 16 }, { ranks: 4, distribute: 'rs' }),
      ringReduceScatter({ ranks: 4, tensor: { name: 'C', shape: [128, 64] }, axis: 0 }),
    );
    expect(chunkTable(rs).entries.every((e) => e.colParts === 2)).toBe(true);
    // A one-shot all-reduce rewrites the regions its adds read but never reads them again: a part per tile.
    const options = { ranks: 4, tensor: { name: 'C', shape: [128, 64] }, axis: 0 } as const;
    const oneShot: ChunkPlan = { name: 'one-shot all-reduce', ranks: 4, chunks: [...oneShotReduceScatter(options).chunks, ...oneShotAllGather(options).chunks.map((c) => ({ ...c, step: 1 }))] };
    const table = chunkTable(lowered(gemmKernel({ m: 128, n: 64, k: 32, blockM: 32, blockN: 32, blockK: 16 }, { ranks: 4, distribute: 'rs' }), oneShot));
    expect(table.entries.every((e) => e.colParts === 2)).toBe(true);
  });

  it('one-shot reduce-scatter: the adds into one shard are merged, counted on one lead part and summed by it, no lock', () => {
    const module = lowered(
      gemmKernel({ m: 96, n: 32, k: 32, blockM: 32, blockN: 32, blockK: 16 }, { ranks: 3, distribute: 'rs' }),
      oneShotReduceScatter({ ranks: 3, tensor: { name: 'C', shape: [96, 32] }, axis: 0 }),
    );
    const table = chunkTable(module);
    expect(table.locks).toBe(0);
    expect(table.parts.every((p) => p.lock === -1)).toBe(true);
    for (const d of [0, 1, 2]) {
      const into = table.parts.filter((p) => table.entries[p.chunk]!.chunk.dst === d);
      // Both adds into shard d count on one lead, which sums the sources of both: ranks d+1 and d+2.
      const leads = new Set(into.map((p) => p.lead));
      expect(leads.size).toBe(1);
      const lead = table.parts[[...leads][0]!]!;
      expect(lead.members.map((m) => table.entries[table.parts[m]!.chunk]!.chunk.src).sort()).toEqual([0, 1, 2].filter((r) => r !== d));
    }
    // In the descriptors the lead needs all its members' requirements: 2 arrivals x 2 sides each.
    const { words } = chunkDescriptors(table, table.parts.map((p) => p.need), () => 0);
    const need = (p: number) => words[p * DESCRIPTOR_WORDS + FIELD.need];
    const lead = table.parts.find((p) => p.members.length > 0)!;
    expect(table.parts.map((p) => p.need)).toEqual(Array(6).fill(2));
    expect(need(lead.index)).toBe(4);
  });

  it('one-shot reduce-scatter: the owner counts once for all merged adds, on the lead', () => {
    const module = lowered(
      gemmKernel({ m: 128, n: 32, k: 32, blockM: 32, blockN: 32, blockK: 16 }, { ranks: 4, distribute: 'rs' }),
      oneShotReduceScatter({ ranks: 4, tensor: { name: 'C', shape: [128, 32] }, axis: 0 }),
    );
    const fused = emitFusedKernel(module);
    if (E.isLeft(fused)) throw new Error(fused.left.map((d) => d.message).join('\n'));
    const table = chunkTable(module);
    // One run of 12 arrives, one loop over the tile's row: the code does not name the chunks.
    // Its definition, count_requirement's call and the arrive loop's.
    expect(fused.right.wgsl.match(/count_on_lead\(/g)).toHaveLength(3);
    expect(fused.right.wgsl).not.toMatch(/count_on_lead\(\d/);
    const rows = barrierRows(fused.right, 'ARRIVES_0', 2);
    for (let rank = 0; rank < 4; rank++) {
      for (let pm = 0; pm < 4; pm++) {
        // Tile pm of every rank stores shard pm (rows 32·pm): the owner counts the group's 3 members at
        // once on the lead; every other rank counts its own add, on the same lead.
        const into = table.entries.filter((e) => e.chunk.dst === pm);
        const lead = table.parts[into[0]!.firstPart]!.lead;
        expect(into.every((e) => table.parts[e.firstPart]!.lead === lead)).toBe(true);
        expect(rows.get(rank)!.get(`${pm},0`)).toEqual([[lead, rank === pm ? 3 : 1]]);
      }
    }
  });

  it('a move divides by a part width all parts share as a literal, tests no lane past a part\'s end where all parts are whole rounds, and reads a merged add\'s member ranks outside the element loop', () => {
    const moveCode = (n: number, blockM: number) => {
      const module = lowered(
        gemmKernel({ m: 256, n, k: 32, blockM, blockN: 32, blockK: 16 }, { ranks: 4, distribute: 'rs' }),
        oneShotReduceScatter({ ranks: 4, tensor: { name: 'C', shape: [256, n] }, axis: 0 }),
      );
      const fused = emitFusedKernel(module);
      if (E.isLeft(fused)) throw new Error(fused.left.map((d) => d.message).join('\n'));
      expect(fused.right.wgsl).toContain('const WORKGROUP_SIZE: u32 = 256u;');
      return fused.right.wgsl.slice(fused.right.wgsl.indexOf('fn move_part'), fused.right.wgsl.indexOf('fn publish_pending'));
    };
    // 64 columns in tiles of 64x32: every part 2,048 elements, whole rounds of 8 x 256 invocations.
    const even = moveCode(64, 64);
    expect(even).toContain('let x0 = lo + vec4u(0u, 0u, e0 / (32u), e0 % 32u);');
    expect(even).not.toContain('extent.w');
    expect(even).toContain('let e1 = e0 + 1u * WORKGROUP_SIZE;');
    expect(even).not.toContain('let in1');
    // 48 columns in tiles of 32x32: parts 32 and 16 wide, of 1,024 and 512 elements.
    const uneven = moveCode(48, 32);
    expect(uneven).toContain('let x0 = lo + vec4u(0u, 0u, e0 / (extent.w), e0 % extent.w);');
    expect(uneven).toContain('if (in7) {');
    const elementLoops = even.split('for (var e0 = lid;').slice(1).map((loop) => loop.slice(0, loop.indexOf('\n      }')));
    expect(elementLoops.length).toBeGreaterThan(1);
    for (const loop of elementLoops) expect(loop).not.toContain('member_src');
  });
});

describe('WGSL emission', () => {
  it('matches the golden kernel for a 2-rank AllGather + GEMM', () => {
    const fused = emitFusedKernel(ag(2));
    if (E.isLeft(fused)) throw new Error(fused.left.map((d) => d.message).join('\n'));
    const file = join(import.meta.dirname, 'golden', 'ag-gemm-2.wgsl');
    if (process.env.UPDATE_GOLDEN === '1') writeFileSync(file, fused.right.wgsl);
    expect(existsSync(file)).toBe(true);
    expect(fused.right.wgsl).toBe(readFileSync(file, 'utf8'));
    // One phase: two token workgroups (each rank's own shard is ready at launch), then 2 ranks x 8 tiles.
    expect(fused.right.phases).toEqual([[2 + 2 * 8, 1]]);
    // Rank 1 runs its own rows (tiles 2 and 3 of the grid's rows) first: chunk-arrival order.
    expect(Array.from(fused.right.tables.data.slice(16, 18))).toEqual([2, 0]);
  });

  it('waits through one loop over the tile\'s row of a table, which lists the chunk and parts each tile reads', () => {
    const fused = emitFusedKernel(ag(2));
    if (E.isLeft(fused)) throw new Error('emit failed');
    expect(fused.right.wgsl).toContain('// wait %c1 when %pm in [2, 4)');
    expect(fused.right.wgsl).toContain('let wait_row = WAITS_0 + 2u * tile_row;');
    expect(fused.right.wgsl).not.toContain('rank == 0u');
    // 128 rows in 32-row tiles: rank 0 reads rank 1's rows (64-127, chunk 1, its part 1) in tiles
    // pm = 2, 3; rank 1 rank 0's (chunk 0, part 0) in pm = 0, 1; nothing else.
    const waits = barrierRows(fused.right, 'WAITS_0', 3);
    for (let pm = 0; pm < 4; pm++) {
      for (let pn = 0; pn < 2; pn++) {
        expect(waits.get(0)!.get(`${pm},${pn}`)).toEqual(pm >= 2 ? [[1, 1, 2]] : []);
        expect(waits.get(1)!.get(`${pm},${pn}`)).toEqual(pm < 2 ? [[0, 0, 1]] : []);
      }
    }
  });

  it('refuses what it cannot lower, naming the op', () => {
    const module = buildModule('rowsum', { ranks: 1 }, (mb) => {
      const X = mb.tensor('X', [32, 32], 'f32');
      const Y = mb.tensor('Y', [32, 1], 'f32');
      mb.kernel('k', [1], (kb) => {
        const p = kb.programId(0, 'p');
        const x = kb.load(X, [mul(p, 32), 0], [32, 32], 'x');
        kb.store(Y, [mul(p, 32), 0], kb.reduce('sum', x, 1, 's'));
      });
    });
    const fused = emitFusedKernel(module);
    // The stored [32, 1] column sets the register tile; the [32, 32] input does not fit it.
    expect(E.isLeft(fused) && fused.left.map((d) => [d.code, d.op, d.value])).toContainEqual(['codegen/unsupported', 'load', 'x']);
  });
});
