/**
 * Fuzzing plan validation with invalid plans: a valid template plan for a random GEMM, broken in one
 * known way, must be rejected by the pipeline before any code is generated, with the diagnostic that
 * names the fault: a chunk removed (align/uncovered), a chunk written twice or into its destination's
 * own shard (align/overlap), a rank out of range (verify/chunk, or PlanFormatError from the JSON
 * form), steps that forward data before it arrives (align/unavailable), and a wait cycle through the
 * tiles (align/cycle). Random plans of random chunks must never make the pipeline throw.
 *
 * FUZZ_RUNS sets the cases per property (default 60); FUZZ_SEED and FUZZ_PATH replay a failure
 * (fast-check prints both in the failure message). See docs/reliability.md.
 */
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { add, buildModule, gemmKernel, mul, shardRange, type ChunkPlan, type ChunkSpec, type Diagnostic, type Module } from '@syncopate/ir';
import { alignChunksPass } from '../src/align-chunks.js';
import { attachPlan } from '../src/attach-plan.js';
import { insertBarriers } from '../src/insert-barriers.js';
import { runPipeline } from '../src/manager.js';
import { reorderTiles } from '../src/reorder-tiles.js';
import { oneShotAllGather, oneShotReduceScatter, PlanFormatError, planFromJson, planToJson, ringAllGather, ringReduceScatter } from '../src/templates/index.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? '') || 60;

function parameters<T>(numRuns = RUNS): fc.Parameters<T> {
  const { FUZZ_SEED: seed, FUZZ_PATH: path } = process.env;
  return { numRuns, ...(seed ? { seed: Number(seed) } : {}), ...(path ? { path } : {}) };
}

/** The pipeline `compile` runs, up to where code generation would begin. */
const PIPELINE = [attachPlan, alignChunksPass, reorderTiles, insertBarriers];

function diagnose(kernel: Module, plan: ChunkPlan): readonly Diagnostic[] {
  const result = runPipeline(PIPELINE, kernel, { plan, options: {} });
  return E.isLeft(result) ? result.left : [];
}

const codes = (ds: readonly Diagnostic[]) => ds.map((d) => d.code);

interface Gemm {
  readonly ag: boolean;
  readonly ranks: number;
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly block: number;
  readonly ring: boolean;
  readonly chunksPerRank: number;
}

const arbGemm = (o: { minRanks?: number; ag?: boolean } = {}): fc.Arbitrary<Gemm> =>
  fc
    .record({
      ag: o.ag === undefined ? fc.boolean() : fc.constant(o.ag),
      ranks: fc.integer({ min: o.minRanks ?? 2, max: 8 }),
      rowsPerRank: fc.integer({ min: 1, max: 12 }),
      extraRows: fc.integer({ min: 0, max: 7 }),
      n: fc.integer({ min: 1, max: 40 }),
      k: fc.integer({ min: 1, max: 40 }),
      block: fc.constantFrom(4, 8, 16),
      ring: fc.boolean(),
      chunksPerRank: fc.integer({ min: 1, max: 3 }),
    })
    .map(({ rowsPerRank, extraRows, ...g }) => ({ ...g, m: g.ranks * rowsPerRank + Math.min(extraRows, g.ranks - 1) }));

function kernelOf(g: Gemm): Module {
  return gemmKernel({ m: g.m, n: g.n, k: g.k, blockM: g.block, blockN: g.block, blockK: g.block }, { ranks: g.ranks, distribute: g.ag ? 'ag' : 'rs' });
}

function planOf(g: Gemm): ChunkPlan {
  const tensor = g.ag ? { name: 'A', shape: [g.m, g.k] } : { name: 'C', shape: [g.m, g.n] };
  const o = { ranks: g.ranks, tensor, axis: 0, chunksPerRank: g.chunksPerRank };
  return g.ag ? (g.ring ? ringAllGather : oneShotAllGather)(o) : (g.ring ? ringReduceScatter : oneShotReduceScatter)(o);
}

const describeGemm = (g: Gemm) =>
  `${g.ring ? 'ring' : 'one-shot'} ${g.ag ? 'all-gather' : 'reduce-scatter'} ranks=${g.ranks} ${g.m}x${g.n}x${g.k} block=${g.block} chunks/rank=${g.chunksPerRank}`;

/** The rank whose shard holds row `row` of an M-row tensor sharded over `ranks`. */
function ownerOfRow(m: number, ranks: number, row: number): number {
  for (let r = 0; r < ranks; r++) {
    const [lo, hi] = shardRange(m, ranks, r);
    if (row >= lo && row < hi) return r;
  }
  throw new RangeError(`row ${row} is outside 0:${m}`);
}

describe('fuzz: valid template plans pass', () => {
  it('every template plan of a random GEMM compiles', () => {
    fc.assert(
      fc.property(arbGemm({ minRanks: 1 }), (g) => {
        expect(diagnose(kernelOf(g), planOf(g)), describeGemm(g)).toEqual([]);
      }),
      parameters(),
    );
  });
});

describe('fuzz: invalid plans are rejected before codegen, with the diagnostic that names the fault', () => {
  it('a chunk removed from an all-gather leaves a read uncovered on its destination', () => {
    fc.assert(
      fc.property(arbGemm({ ag: true }), fc.nat(), (g, pick) => {
        const plan = planOf(g);
        const removed = plan.chunks[pick % plan.chunks.length]!;
        const ds = diagnose(kernelOf(g), { ...plan, chunks: plan.chunks.filter((c) => c !== removed) });
        const uncovered = ds.filter((d) => d.code === 'align/uncovered');
        expect(uncovered.length, describeGemm(g)).toBeGreaterThan(0);
        expect(uncovered.some((d) => d.message.includes(`of rank ${removed.dst} reads @A`))).toBe(true);
        expect(uncovered.every((d) => d.op === 'load' && d.value === 'a' && d.pass === 'align-chunks')).toBe(true);
      }),
      parameters(),
    );
  });

  it('a chunk sent twice overlaps; a copy onto a reduce-scatter\'s rows conflicts with the stores there', () => {
    fc.assert(
      fc.property(arbGemm(), fc.nat(), fc.integer({ min: 0, max: 9 }), (g, pick, step) => {
        const plan = planOf(g);
        const original = plan.chunks[pick % plan.chunks.length]!;
        // Sent again as a copy (reduce-adds may share elements), at some step.
        const twice: ChunkSpec = { ...original, step, kind: 'copy' };
        const ds = diagnose(kernelOf(g), { ...plan, chunks: [...plan.chunks, twice] });
        // Two copies overlap at any steps; a copy and a reduce-add only at the same step (else they are ordered).
        if (g.ag || step === original.step) {
          expect(codes(ds), describeGemm(g)).toContain('align/overlap');
          const overlap = ds.find((d) => d.code === 'align/overlap')!;
          expect(overlap.op).toBe('chunk');
          expect(overlap.message).toContain(`both write @${original.tensor}`);
          expect(overlap.message).toContain(`of rank ${original.dst}`);
        }
        // A copy into C lands on rows the destination's tiles store.
        if (!g.ag) expect(codes(ds), describeGemm(g)).toContain('align/store-conflict');
      }),
      parameters(),
    );
  });

  it('a copy into rows its destination owns overlaps', () => {
    fc.assert(
      fc.property(arbGemm({ ag: true }), fc.nat(), (g, pick) => {
        const plan = planOf(g);
        const c = plan.chunks[pick % plan.chunks.length]!;
        const owner = ownerOfRow(g.m, g.ranks, c.region.lo[0]!);
        // Sent from another rank into the owner of its rows.
        const into: ChunkSpec = { ...c, src: (owner + 1) % g.ranks, dst: owner, step: 0 };
        const ds = diagnose(kernelOf(g), { ...plan, chunks: [...plan.chunks, into] });
        expect(ds.some((d) => d.code === 'align/overlap' && d.message.includes(`which rank ${owner} owns`)), describeGemm(g)).toBe(true);
      }),
      parameters(),
    );
  });

  it('a rank out of range is refused by the verifier, and by planFromJson with the JSON path', () => {
    fc.assert(
      fc.property(arbGemm(), fc.nat(), fc.boolean(), fc.integer({ min: 0, max: 1000 }), (g, pick, asSource, beyond) => {
        const plan = planOf(g);
        const at = pick % plan.chunks.length;
        const field = asSource ? 'src' : 'dst';
        const bad = { ...plan.chunks[at]!, [field]: g.ranks + beyond };
        const broken = { ...plan, chunks: plan.chunks.map((c, i) => (i === at ? bad : c)) };
        const ds = diagnose(kernelOf(g), broken);
        const verify = ds.filter((d) => d.code === 'verify/chunk');
        expect(verify.length, describeGemm(g)).toBeGreaterThan(0);
        expect(verify[0]!.message).toContain(`rank ${g.ranks + beyond} is not a rank in [0, ${g.ranks})`);
        expect(verify[0]!.pass).toBe('attach-plan');
        let thrown: unknown;
        try {
          planFromJson(planToJson(broken));
        } catch (e) {
          thrown = e;
        }
        expect(thrown).toBeInstanceOf(PlanFormatError);
        expect((thrown as PlanFormatError).path).toBe(`chunks[${at}].${field}`);
      }),
      parameters(),
    );
  });

  it('a ring that forwards before it receives (all steps 0) sends data its source lacks', () => {
    fc.assert(
      fc.property(arbGemm({ ag: true, minRanks: 3 }), (g) => {
        const ring = { ...g, ring: true };
        const plan = planOf(ring);
        const ds = diagnose(kernelOf(ring), { ...plan, chunks: plan.chunks.map((c) => ({ ...c, step: 0 })) });
        expect(codes(ds), describeGemm(ring)).toContain('align/unavailable');
        expect(ds.find((d) => d.code === 'align/unavailable')!.message).toMatch(/neither owns nor receives before step 0/);
      }),
      parameters(),
    );
  });

  it('reduce-adds that each wait, through the tiles, for the other form a cycle', () => {
    // Tile p of each rank reads X[w*p : w*p+w] and stores it into block G-1-p. A reduce-add of block
    // G-1-b from rank r to rank s is completed by r's tile b, which reads block b; a reduce-add of
    // block b from s to r lands where r's tile b reads and is completed by s's tile G-1-b, which reads
    // block G-1-b, where the first one lands: each waits for the other.
    const arb = fc
      .record({
        tiles: fc.integer({ min: 2, max: 8 }),
        width: fc.constantFrom(1, 2, 4),
        ranks: fc.integer({ min: 2, max: 4 }),
        b: fc.nat(),
        r: fc.nat(),
        hop: fc.nat(),
        step: fc.integer({ min: 0, max: 3 }),
      })
      .filter(({ tiles, b }) => b % tiles !== tiles - 1 - (b % tiles));
    fc.assert(
      fc.property(arb, ({ tiles, width, ranks, b: bRaw, r: rRaw, hop, step }) => {
        const b = bRaw % tiles;
        const r = rRaw % ranks;
        const s = (r + 1 + (hop % (ranks - 1))) % ranks;
        const kernel = buildModule('swap', { ranks }, (mb) => {
          const X = mb.tensor('X', [tiles * width], 'f32');
          mb.kernel('swap', [tiles], (kb) => {
            const p = kb.programId(0, 'p');
            const x = kb.load(X, [mul(p, width)], [width], 'x');
            kb.store(X, [add(mul(p, -width), (tiles - 1) * width)], x);
          });
        });
        const block = (i: number) => ({ lo: [i * width], hi: [(i + 1) * width] });
        const plan: ChunkPlan = {
          ranks,
          chunks: [
            { tensor: 'X', region: block(tiles - 1 - b), src: r, dst: s, step, kind: 'reduce-add' },
            { tensor: 'X', region: block(b), src: s, dst: r, step, kind: 'reduce-add' },
          ],
        };
        const ds = diagnose(kernel, plan);
        expect(codes(ds)).toEqual(['align/cycle']);
        expect(ds[0]!.message).toMatch(/the plan can deadlock: %c(\d) waits for %c(\d) waits for %c\1/);
      }),
      parameters(),
    );
  });

  it('random plans of random chunks never make the pipeline throw', () => {
    const arbChunk = (ranks: number) =>
      fc.record({
        tensor: fc.constantFrom('A', 'B', 'C', 'Z'),
        lo0: fc.integer({ min: -2, max: 40 }),
        len0: fc.integer({ min: -1, max: 40 }),
        lo1: fc.integer({ min: 0, max: 40 }),
        len1: fc.integer({ min: 1, max: 40 }),
        src: fc.integer({ min: -1, max: ranks }),
        dst: fc.integer({ min: -1, max: ranks }),
        step: fc.integer({ min: 0, max: 4 }),
        kind: fc.constantFrom('copy' as const, 'reduce-add' as const),
      });
    const arb = arbGemm().chain((g) => fc.tuple(fc.constant(g), fc.array(arbChunk(g.ranks), { maxLength: 12 })));
    fc.assert(
      fc.property(arb, ([g, raw]) => {
        const chunks: ChunkSpec[] = raw.map((c) => ({
          tensor: c.tensor,
          region: { lo: [c.lo0, c.lo1], hi: [c.lo0 + c.len0, c.lo1 + c.len1] },
          src: c.src,
          dst: c.dst,
          step: c.step,
          kind: c.kind,
        }));
        // Either verdict is fine; throwing is not.
        const result = runPipeline(PIPELINE, kernelOf(g), { plan: { ranks: g.ranks, chunks }, options: {} });
        if (E.isLeft(result)) expect(result.left.length).toBeGreaterThan(0);
      }),
      parameters(RUNS * 3),
    );
  });
});
