/**
 * The rule behind waits by cache line (passes' cache-lines.ts), checked on what the compiler emits,
 * since lavapipe cannot show a stale line: on a device whose L1 is not coherent, no workgroup may read
 * a 128-byte line that holds bytes of a chunk not yet landed, in any rank's copy on that device, where
 * something on its compute unit reads those bytes later. Every rank's copy of a tensor lies back to
 * back in the device's buffer (rank r's at r·elements), so a line can hold the end of one rank's copy
 * and the start of the next's.
 *
 * For random all-gather + GEMM and ring-attention cases of the GPU fuzz's kind, on one device, each
 * tile of each rank is walked through the lowered kernel in program order: every load of a gathered
 * input (a tensor no tile stores into, every chunk a copy) must come after waits, for that rank and
 * tile, for every chunk that writes into a line the load reads (the IR's waits: chunk-level, order
 * included), and the tables the WGSL reads must list every part of those chunks in those lines.
 *
 * The moves of chunk parts read their sources too, and cannot wait for what lands beside them (two
 * shards' moves each read the line the other's fills). So each part the kernel moves, dispatch by
 * dispatch, must read lines whose bytes are final but for those of the parts it forwards (which it
 * waits for): what another part of the same dispatch lands in them must have been put there by an
 * earlier dispatch (the line edges of backends' gpu-signal/line-edges.ts), and what it copies must be
 * there: its owner's input, or landed by an earlier dispatch or a part it forwards.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dtypeBytes, evalAffine, ownedBox, type Box, type Module, type Op } from '@syncopate/ir';
import { chunkTable } from '@syncopate/backends';
import { barrierPoints } from '../../backends/src/gpu-signal/barrier-table.js';
import { DESCRIPTOR_WORDS, FIELD } from '../../backends/src/gpu-signal/descriptors.js';
import { compileOrThrow } from '../src/api/compile.js';
import { lowerToWgsl } from '../src/tools/run.js';
import { workloads } from '../src/workloads/index.js';
import type { WorkloadOptions } from '../src/workloads/types.js';
import { envCount, fuzzParameters } from './fuzz-gemm.js';

const LINE = 128;

interface Violation {
  readonly rank: number;
  readonly tile: readonly number[];
  readonly tensor: string;
  readonly line: number;
  readonly chunk: string;
}

/** Gathered inputs: 2-D tensors with chunks, every chunk a copy, never stored into. */
function gatheredInputs(module: Module): string[] {
  const stored = new Set<string>();
  const walk = (ops: readonly Op[]) => ops.forEach((op) => (op.op === 'store' ? stored.add(op.tensor) : op.op === 'for' && walk(op.body)));
  walk(module.kernel.body);
  return module.tensors
    .filter((t) => t.shape.length === 2 && !stored.has(t.name))
    .filter((t) => module.chunks.some((c) => c.tensor === t.name) && module.chunks.every((c) => c.tensor !== t.name || c.kind === 'copy'))
    .map((t) => t.name);
}

/** Lines (buffer byte offset / 128) of `box` in `rank`'s copy of a [R, C] tensor of `size`-byte elements. */
function linesOf(box: Box, rank: number, shape: readonly number[], size: number, into: Set<number>): void {
  const [R, C] = shape as [number, number];
  const r0 = Math.max(0, box.lo[0]!);
  const r1 = Math.min(R, box.hi[0]!);
  const c0 = Math.max(0, box.lo[1]!);
  const c1 = Math.min(C, box.hi[1]!);
  if (c0 >= c1) return;
  for (let r = r0; r < r1; r++) {
    const first = (rank * R * C + r * C + c0) * size;
    const last = (rank * R * C + r * C + c1) * size - 1;
    for (let l = Math.floor(first / LINE); l <= Math.floor(last / LINE); l++) into.add(l);
  }
}

/** Line → indices of the chunks (or parts) whose bytes lie in it, on their destination's copy. */
function lineOwners(regions: readonly { readonly region: Box; readonly dst: number }[], shape: readonly number[], size: number): Map<number, number[]> {
  const owners = new Map<number, number[]>();
  regions.forEach(({ region, dst }, i) => {
    const lines = new Set<number>();
    linesOf(region, dst, shape, size, lines);
    for (const l of lines) {
      const list = owners.get(l);
      if (list) list.push(i);
      else owners.set(l, [i]);
    }
  });
  return owners;
}

/**
 * Walks every tile of every rank through the kernel: returns the loads that read a line some chunk
 * writes into, with no wait for that chunk on that rank at or before it; and per rank and tile, the
 * lines of each gathered input it reads.
 */
function checkWaits(module: Module): { violations: Violation[]; read: Map<string, Map<string, Set<number>>> } {
  const tensors = gatheredInputs(module);
  const chunkIndex = new Map(module.chunks.map((c, i) => [c.value.id, i]));
  const owners = new Map(
    tensors.map((name) => {
      const t = module.tensors.find((x) => x.name === name)!;
      const regions = module.chunks.map((c) => (c.tensor === name ? { region: c.region, dst: c.dst } : { region: { lo: [0, 0], hi: [0, 0] }, dst: 0 }));
      return [name, lineOwners(regions, t.shape, dtypeBytes(t.dtype))] as const;
    }),
  );
  const violations: Violation[] = [];
  const read = new Map<string, Map<string, Set<number>>>();
  const grid = module.kernel.grid;
  const tiles: number[][] = grid.reduce<number[][]>((acc, n) => acc.flatMap((t) => Array.from({ length: n }, (_, i) => [...t, i])), [[]]);
  for (let rank = 0; rank < module.ranks; rank++) {
    for (const tile of tiles) {
      const env = new Map<number, number>();
      const waited = new Set<number>();
      const lines = new Map<string, Set<number>>();
      const walk = (ops: readonly Op[]) => {
        for (const op of ops) {
          if (op.op === 'program_id') env.set(op.result.id, tile[op.axis]!);
          else if (op.op === 'rank_id') env.set(op.result.id, rank);
          else if (op.op === 'for') {
            const [lo, hi] = [evalAffine(op.lower, env), evalAffine(op.upper, env)];
            for (let v = lo; v < hi; v += op.step) {
              env.set(op.inductionVar.id, v);
              walk(op.body);
            }
          } else if (op.op === 'wait') {
            const c = chunkIndex.get(op.chunk.id)!;
            const waiter = op.rank ?? module.chunks[c]!.dst;
            if (waiter === rank && (op.guard ?? []).every((g) => evalAffine(g.expr, env) >= g.lo && evalAffine(g.expr, env) < g.hi)) waited.add(c);
          } else if (op.op === 'load' && tensors.includes(op.tensor)) {
            const t = module.tensors.find((x) => x.name === op.tensor)!;
            const lo = op.offsets.map((e) => evalAffine(e, env));
            const box = { lo, hi: lo.map((x, i) => x + op.result.type.shape[i]!) };
            const here = new Set<number>();
            linesOf(box, rank, t.shape, dtypeBytes(t.dtype), here);
            let all = lines.get(op.tensor);
            if (!all) lines.set(op.tensor, (all = new Set()));
            for (const l of here) {
              all.add(l);
              for (const c of owners.get(op.tensor)!.get(l) ?? []) {
                if (!waited.has(c)) violations.push({ rank, tile: [...tile], tensor: op.tensor, line: l, chunk: module.chunks[c]!.value.name });
              }
            }
          }
        }
      };
      walk(module.kernel.body);
      let byTile = read.get(String(rank));
      if (!byTile) read.set(String(rank), (byTile = new Map()));
      for (const [name, ls] of lines) byTile.set(`${tile.join()}|${name}`, ls);
    }
  }
  return { violations, read };
}

/**
 * The parts the tables' waits list per rank and tile (any iteration of a point indexed by a loop's),
 * as the WGSL reads them (gpu-signal/barrier-table.ts's layout); then those missing from the parts in
 * the lines each tile reads.
 */
function checkTables(module: Module, read: Map<string, Map<string, Set<number>>>): string[] {
  const fused = lowerToWgsl({ module } as never);
  const table = chunkTable(module);
  expect(table.entries.map((e) => e.parts)).toEqual(fused.chunkParts);
  const tiles = fused.tilesPerRank;
  const points = barrierPoints(module, fused.localRanks.length * tiles).filter((p) => p.kind === 'wait');
  const data = fused.tables.data;
  const gridRank = Number(/const GRID_RANK: u32 = (\d+)u;/.exec(fused.wgsl)![1]);
  const listed = new Map<number, Map<string, Set<number>>>();
  points.forEach((p, n) => {
    const base = Number(new RegExp(`const WAITS_${n}: u32 = (\\d+)u;`).exec(fused.wgsl)?.[1]);
    expect(Number.isInteger(base)).toBe(true);
    const iterations = p.loop?.iterations ?? 1;
    fused.localRanks.forEach((rank, local) => {
      let byTile = listed.get(rank);
      if (!byTile) listed.set(rank, (byTile = new Map()));
      for (let position = 0; position < tiles; position++) {
        const slot = (rank * tiles + position) * gridRank;
        const tile = Array.from(data.slice(slot, slot + gridRank)).join();
        let parts = byTile.get(tile);
        if (!parts) byTile.set(tile, (parts = new Set()));
        for (let i = 0; i < iterations; i++) {
          const at = base + 2 * ((local * tiles + position) * iterations + i);
          const [first, count] = [data[at]!, data[at + 1]!];
          for (let e = 0; e < count; e++) {
            const [, lo, hi] = data.slice(first + e * p.entryWords, first + e * p.entryWords + 3);
            for (let x = lo!; x < hi!; x++) parts.add(x);
          }
        }
      }
    });
  });
  const missing: string[] = [];
  for (const name of gatheredInputs(module)) {
    const t = module.tensors.find((x) => x.name === name)!;
    const parts = table.parts.map((p) => {
      const chunk = table.entries[p.chunk]!.chunk;
      return chunk.tensor === name ? { region: p.region, dst: chunk.dst } : { region: { lo: [0, 0], hi: [0, 0] }, dst: 0 };
    });
    const owners = lineOwners(parts, t.shape, dtypeBytes(t.dtype));
    for (const rank of fused.localRanks) {
      for (const [key, lines] of read.get(String(rank)) ?? []) {
        const [tile, tensor] = key.split('|');
        if (tensor !== name) continue;
        const have = listed.get(rank)?.get(tile!) ?? new Set<number>();
        for (const l of lines) for (const p of owners.get(l) ?? []) if (!have.has(p)) missing.push(`rank ${rank} tile ${tile} line ${l}: part ${p}`);
      }
    }
  }
  return [...new Set(missing)];
}

/**
 * The parts the lowered kernel moves, dispatch by dispatch: each phase's tokens, then every part whose
 * requirements they complete (its feeders published), as the publish cascade runs them. Returns each
 * move of a gathered input that reads a line another part of its dispatch (not one it forwards) lands
 * bytes in that no earlier dispatch wrote and that something of the dispatch reads afterwards (its
 * tiles, if it runs any, or a move), and each move that copies bytes not there yet.
 */
function checkMoves(module: Module): string[] {
  const fused = lowerToWgsl({ module } as never);
  const data = fused.tables.data;
  const constant = (name: string) => Number(new RegExp(`const ${name}: u32 = (\\d+)u;`).exec(fused.wgsl)?.[1] ?? NaN);
  const [parts, partsAt, phases, phasesAt, phaseWords] = ['PARTS', 'PARTS_AT', 'PHASES', 'PHASES_AT', 'PHASE_WORDS'].map(constant) as [number, number, number, number, number];
  const word = (p: number, f: keyof typeof FIELD, i = 0) => data[partsAt + p * DESCRIPTOR_WORDS + FIELD[f] + i]!;
  const list = (p: number, start: 'depStart' | 'memberStart', count: 'depCount' | 'memberCount') =>
    Array.from({ length: word(p, count) }, (_, i) => data[partsAt + word(p, start) + i]!);
  const feeders = Array.from({ length: parts }, () => new Set<number>());
  for (let p = 0; p < parts; p++) for (const d of list(p, 'depStart', 'depCount')) feeders[d]!.add(p);
  // Per dispatch, the parts published in it: tokens count on their lead, a lead whose count is met publishes its members.
  const counted = new Array<number>(parts).fill(0);
  const dispatches: number[][] = [];
  const runsTiles: boolean[] = [];
  for (let k = 0; k < phases; k++) {
    const row = phasesAt + k * phaseWords;
    runsTiles.push(fused.localRanks.some((_, local) => data[row + 4 + 2 * local]! > 0));
    const published: number[] = [];
    const count = (p: number) => {
      const lead = word(p, 'lead');
      if (++counted[lead]! !== word(lead, 'need')) return;
      for (const q of word(lead, 'memberCount') > 0 ? list(lead, 'memberStart', 'memberCount') : [lead]) {
        published.push(q);
        list(q, 'depStart', 'depCount').forEach(count);
      }
    };
    for (let i = 0; i < data[row + 1]!; i++) count(data[data[row + 2]! + i]!);
    dispatches.push(published);
  }
  const problems: string[] = [];
  for (const name of gatheredInputs(module)) {
    const t = module.tensors.find((x) => x.name === name)!;
    const [R, C] = t.shape as [number, number];
    const size = dtypeBytes(t.dtype);
    const line = (e: number) => Math.floor((e * size) / LINE);
    // A part's elements in the buffer (rank r's copy at r·R·C), at its source or its destination.
    const elements = (p: number, rank: number) => {
      const out: number[] = [];
      const [r0, c0] = [word(p, 'lo', 2), word(p, 'lo', 3)];
      for (let r = r0; r < r0 + word(p, 'extent', 2); r++) for (let c = c0; c < c0 + word(p, 'extent', 3); c++) out.push(rank * R * C + r * C + c);
      return out;
    };
    const ours = (p: number) => module.chunks[word(p, 'chunk')]!.tensor === name;
    const input = new Set<number>();
    for (let rank = 0; rank < module.ranks; rank++) {
      const own = ownedBox(t.shape, t.distribution, module.ranks, rank);
      for (let r = own.lo[0]!; r < own.hi[0]!; r++) for (let c = own.lo[1]!; c < own.hi[1]!; c++) input.add(rank * R * C + r * C + c);
    }
    const before = new Set<number>();
    dispatches.forEach((published, k) => {
      const moved = published.filter(ours);
      // Line → the parts of this dispatch landing there, with their elements in it not yet written.
      const landing = new Map<number, Map<number, number[]>>();
      for (const w of moved) {
        for (const e of elements(w, word(w, 'dst'))) {
          if (before.has(e)) continue;
          let byPart = landing.get(line(e));
          if (!byPart) landing.set(line(e), (byPart = new Map()));
          byPart.set(w, [...(byPart.get(w) ?? []), e]);
        }
      }
      // Landed bytes read later in the dispatch: by its tiles, or by moves (a ring's next hop).
      const sources = new Set(moved.flatMap((m) => elements(m, word(m, 'src'))));
      const readLater = (w: number) => runsTiles[k] || elements(w, word(w, 'dst')).some((e) => sources.has(e) && !before.has(e));
      for (const m of moved) {
        const fed = new Set([...feeders[m]!].flatMap((f) => elements(f, word(f, 'dst'))));
        const source = elements(m, word(m, 'src'));
        const missing = source.filter((e) => !input.has(e) && !before.has(e) && !fed.has(e));
        if (missing.length > 0) problems.push(`dispatch ${k}: part ${m} of %${module.chunks[word(m, 'chunk')]!.value.name} copies element ${missing[0]} before it is there`);
        for (const l of new Set(source.map(line))) {
          for (const [w] of landing.get(l) ?? []) {
            if (w !== m && !feeders[m]!.has(w) && readLater(w)) problems.push(`dispatch ${k}: part ${m} of %${module.chunks[word(m, 'chunk')]!.value.name} reads line ${l} of @${name}, where part ${w} of %${module.chunks[word(w, 'chunk')]!.value.name} lands`);
          }
        }
      }
      for (const w of moved) for (const e of elements(w, word(w, 'dst'))) before.add(e);
    });
  }
  return [...new Set(problems)];
}

function compiled(workload: 'ag-gemm' | 'ring-attn', o: WorkloadOptions, order: string): Module {
  const { kernel, plan } = workloads[workload].build(o);
  return compileOrThrow(kernel, plan, { passOptions: { 'reorder-tiles': { order: order as never } } }).module;
}

describe('waits by cache line across ranks\' copies on one device', () => {
  it('ag-gemm one-shot, 8 ranks, m 138 n 125 k 191, 3 chunks a rank: every line a tile reads is waited for, on every rank', () => {
    const module = compiled('ag-gemm', { ranks: 8, shape: { m: 138, n: 125, k: 191 }, dtype: 'f32', chunksPerRank: 3, gather: 'one-shot' }, 'row-major');
    const { violations, read } = checkWaits(module);
    expect(violations.slice(0, 5)).toEqual([]);
    // Each rank's 24 tiles read A: rank 0's last lines hold rank 1's first rows.
    expect([...read.get('0')!.values()].reduce((n, ls) => n + ls.size, 0)).toBeGreaterThan(0);
    expect(checkTables(module, read).slice(0, 5)).toEqual([]);
    expect(checkMoves(module).slice(0, 5)).toEqual([]);
  });

  it('the fuzz\'s wrong cases (#440 ring-attn f16 n 1, #852 and #1335 ag-gemm one-shot at 8 ranks; suite-2026-11-28 #338 ring-attn one-shot at 7 ranks)', () => {
    const cases = [
      ['ring-attn', { ranks: 5, shape: { m: 105, n: 1, k: 1 }, dtype: 'f16', chunksPerRank: 4, gather: 'one-shot' }, 'column-major'],
      ['ring-attn', { ranks: 7, shape: { m: 126, n: 9, k: 1 }, dtype: 'f16', chunksPerRank: 2, gather: 'one-shot' }, 'row-major'],
      ['ring-attn', { ranks: 7, shape: { m: 126, n: 9, k: 1 }, dtype: 'f16', chunksPerRank: 2, gather: 'ring' }, 'row-major'],
      ['ag-gemm', { ranks: 8, shape: { m: 159, n: 126, k: 11 }, dtype: 'f16', chunksPerRank: 3, gather: 'one-shot', block: { m: 32, n: 16, k: 32 } }, 'row-major'],
      ['ag-gemm', { ranks: 8, shape: { m: 120, n: 130, k: 61 }, dtype: 'f32', chunksPerRank: 2, gather: 'one-shot' }, 'row-major'],
    ] as const;
    for (const [workload, o, order] of cases) {
      const module = compiled(workload, o as WorkloadOptions, order);
      const { violations, read } = checkWaits(module);
      expect(violations.slice(0, 5), `${workload} ${JSON.stringify(o)}`).toEqual([]);
      expect(checkTables(module, read).slice(0, 5), `${workload} ${JSON.stringify(o)}`).toEqual([]);
      expect(checkMoves(module).slice(0, 5), `${workload} ${JSON.stringify(o)}`).toEqual([]);
    }
  });

  it('line edges take a dispatch of their own only where rows share lines', () => {
    const dispatches = (workload: 'ag-gemm' | 'ring-attn', o: WorkloadOptions) => lowerToWgsl({ module: compiled(workload, o, 'row-major') } as never).phases.length;
    // Rows of 128 bytes (64 f16, 32 f32): every line holds one row, one dispatch as before.
    expect(dispatches('ring-attn', { ranks: 7, shape: { m: 448, n: 64, k: 1 }, dtype: 'f16', chunksPerRank: 2, gather: 'one-shot' })).toBe(1);
    expect(dispatches('ag-gemm', { ranks: 8, shape: { m: 128, n: 32, k: 32 }, dtype: 'f32', chunksPerRank: 2, gather: 'ring' })).toBe(1);
    // #338: rows of 18 bytes; its line edges go first.
    expect(dispatches('ring-attn', { ranks: 7, shape: { m: 126, n: 9, k: 1 }, dtype: 'f16', chunksPerRank: 2, gather: 'one-shot' })).toBe(2);
  });

  const RUNS = envCount('FUZZ_RUNS', 12);
  it(`${RUNS} random all-gather cases of the fuzz's kind (ag-gemm and ring-attn, ring and one-shot, f16 and f32)`, () => {
    const cases = fc.record({
      workload: fc.constantFrom('ag-gemm' as const, 'ring-attn' as const),
      ranks: fc.integer({ min: 2, max: 8 }),
      m: fc.integer({ min: 1, max: 24 }),
      n: fc.integer({ min: 1, max: 40 }),
      k: fc.integer({ min: 1, max: 40 }),
      dtype: fc.constantFrom('f32' as const, 'f16' as const),
      chunksPerRank: fc.integer({ min: 1, max: 3 }),
      gather: fc.constantFrom('ring' as const, 'one-shot' as const),
      order: fc.constantFrom('row-major', 'column-major', 'chunk-arrival'),
    });
    fc.assert(
      fc.property(cases, ({ workload, ranks, m, n, k, dtype, chunksPerRank, gather, order }) => {
        // Rows per rank as the fuzz draws them: every rank holds at least one row of each chunk.
        const rows = ranks * Math.max(m, chunksPerRank);
        const shape = workload === 'ring-attn' ? { m: rows, n: Math.min(n, 16), k: 1 } : { m: rows, n, k };
        let module: Module;
        try {
          module = compiled(workload, { ranks, shape, dtype, chunksPerRank, gather }, order);
        } catch {
          return; // refused (a usage error): nothing runs
        }
        const { violations, read } = checkWaits(module);
        expect(violations.slice(0, 5)).toEqual([]);
        expect(checkTables(module, read).slice(0, 5)).toEqual([]);
        expect(checkMoves(module).slice(0, 5)).toEqual([]);
      }),
      fuzzParameters(RUNS),
    );
  });
});
