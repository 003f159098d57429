import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import * as ir from '@syncopate/ir';
import * as passes from '@syncopate/passes';
import {
  alignChunksPass,
  attachPlan,
  insertBarriers,
  reorderTiles,
  compile,
  CompileError,
  compileOrThrow,
  defaultPipeline,
  definePass,
  editModule,
  formatDiagnostic,
  gemmKernel,
  option,
  print,
  SyncopateError,
  type ChunkPlan,
  type ChunkSpec,
  type CompiledKernel,
  type Diagnostic,
  type OptionsOf,
} from '@syncopate/core';

// The custom pass `rename` below declares its options, and this gives them a key in `passOptions`.
const renameFields = { name: option.string() };
declare module '@syncopate/passes' {
  interface PassOptions {
    readonly rename?: OptionsOf<typeof renameFields>;
  }
}

const kernel = gemmKernel({ m: 256, n: 256, k: 128 }, { ranks: 4, distribute: 'ag' });

/** A 4-rank ring all-gather of A[256,128] on rows: at step s, rank r forwards shard (r - s) mod 4 to r + 1. */
function ringAllGatherOfA(ranks = 4): ChunkPlan {
  const rows = 256 / ranks;
  const chunks: ChunkSpec[] = [];
  for (let step = 0; step < ranks - 1; step++) {
    for (let r = 0; r < ranks; r++) {
      const shard = (r - step + ranks) % ranks;
      chunks.push({ tensor: 'A', region: { lo: [shard * rows, 0], hi: [(shard + 1) * rows, 128] }, src: r, dst: (r + 1) % ranks, step });
    }
  }
  return { name: 'ring-all-gather(@A, axis=0)', ranks, chunks };
}

function compiled(result: E.Either<readonly Diagnostic[], CompiledKernel>): CompiledKernel {
  if (E.isLeft(result)) throw new Error(result.left.map(formatDiagnostic).join('\n'));
  return result.right;
}

describe('compile', () => {
  it('attaches the plan to the 4-rank AllGather + GEMM', () => {
    const plan = ringAllGatherOfA();
    const snapshot = structuredClone(kernel);
    const out = compiled(compile(kernel, plan));
    expect(out.module.chunks).toHaveLength(12);
    expect(out.module.chunks.map(({ value: _, ...chunk }) => chunk)).toEqual(
      plan.chunks.map((spec) => ({ kind: 'copy', backend: 'auto', ...spec })),
    );
    expect(out.plan).toBe(plan);
    expect(out.pipeline).toBe('attach-plan,align-chunks,reorder-tiles,insert-barriers');
    expect(out.timings.map((t) => t.pass)).toEqual(['attach-plan', 'align-chunks', 'reorder-tiles', 'insert-barriers']);
    expect(out.dumps).toEqual([]);
    expect(kernel).toEqual(snapshot);
  });

  it('prints the IR after the passes asked for', () => {
    const seen: string[] = [];
    const out = compiled(compile(kernel, ringAllGatherOfA(), { printAfter: 'all', onDump: (pass) => seen.push(pass) }));
    expect(out.dumps.map((d) => d.pass)).toEqual(['attach-plan', 'align-chunks', 'reorder-tiles', 'insert-barriers']);
    expect(out.dumps.at(-1)).toEqual({ pass: 'insert-barriers', ir: print(out.module) });
    expect(seen).toEqual(['attach-plan', 'align-chunks', 'reorder-tiles', 'insert-barriers']);
  });

  it('reports a plan for the wrong number of ranks', () => {
    const result = compile(kernel, ringAllGatherOfA(2));
    expect(E.isLeft(result) && result.left.map((d) => [d.code, d.pass])).toEqual([['plan/ranks', 'attach-plan']]);
  });

  it('runs the pipeline it is given, with passOptions as ctx.options', () => {
    const rename = definePass('rename', 'sets the module name from options.name', renameFields, (m, _ctx, { name = m.name }) =>
      E.right(
        editModule(m, (d) => {
          d.name = name;
        }),
      ),
    );
    const out = compiled(compile(kernel, ringAllGatherOfA(), { pipeline: [...defaultPipeline(), rename], passOptions: { rename: { name: 'ag_gemm' } } }));
    expect(out.module.name).toBe('ag_gemm');
    expect(out.pipeline).toBe('attach-plan,align-chunks,reorder-tiles,insert-barriers,rename');
  });
});

describe('compileOrThrow', () => {
  it('returns what compile returns on success', () => {
    expect(compileOrThrow(kernel, ringAllGatherOfA()).module.chunks).toHaveLength(12);
  });

  it('throws a CompileError carrying the diagnostics, one formatted per line', () => {
    const plan = { ...ringAllGatherOfA(2), chunks: [{ ...ringAllGatherOfA(2).chunks[0]!, tensor: 'Z' }] };
    let thrown: unknown;
    try {
      compileOrThrow(kernel, plan);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(CompileError);
    expect(thrown).toBeInstanceOf(SyncopateError);
    const error = thrown as CompileError;
    expect(error.name).toBe('CompileError');
    expect(error.diagnostics.map((d) => d.code)).toEqual(['plan/ranks', 'plan/unknown-tensor']);
    expect(error.message.split('\n')).toEqual(error.diagnostics.map(formatDiagnostic));
    expect(error.message).toMatch(/^error\[plan\/ranks\] \(attach-plan\) module: the plan is for 2 ranks/);
  });
});

describe('defaultPipeline', () => {
  it('is attach-plan, align-chunks, reorder-tiles, insert-barriers, in a fresh array each call', () => {
    expect(defaultPipeline()).toEqual([attachPlan, alignChunksPass, reorderTiles, insertBarriers]);
    expect(defaultPipeline()).not.toBe(defaultPipeline());
  });
});

describe('@syncopate/core', () => {
  it('re-exports everything of @syncopate/ir and @syncopate/passes', async () => {
    const core: Record<string, unknown> = await import('@syncopate/core');
    for (const [name, value] of [...Object.entries(ir), ...Object.entries(passes)]) expect(core[name], name).toBe(value);
  });
});
