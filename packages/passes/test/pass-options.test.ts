/** Pass options are checked against what each pass declares, before the first pass runs. */
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { gemmKernel, type Diagnostic, type Module } from '@syncopate/ir';
import {
  alignChunksPass,
  attachPlan,
  checkPassOptions,
  definePass,
  editModule,
  insertBarriers,
  option,
  reorderTiles,
  ringAllGather,
  runPipeline,
  type TileKey,
} from '@syncopate/passes';

const kernel = gemmKernel({ m: 128, n: 64, k: 64, blockM: 32, blockN: 32, blockK: 16 }, { ranks: 2, distribute: 'ag', name: 'ag_gemm' });
const plan = ringAllGather({ ranks: 2, tensor: { name: 'A', shape: [128, 64] }, axis: 0 });
const PIPELINE = [attachPlan, alignChunksPass, reorderTiles, insertBarriers];
const KNOWN = "the passes of this pipeline are 'attach-plan', 'align-chunks', 'reorder-tiles', 'insert-barriers'";

const problems = (options: unknown, passes = PIPELINE): [string, string | undefined, string][] =>
  checkPassOptions(passes, options).map((d) => [d.code, d.pass, d.message]);

function left(result: E.Either<readonly Diagnostic[], unknown>): readonly Diagnostic[] {
  if (E.isRight(result)) throw new Error('expected diagnostics, got a module');
  return result.left;
}

describe('checkPassOptions', () => {
  it('takes the options every built-in pass declares, and undefined for any field', () => {
    const byKey: TileKey = (tile) => -tile[0]!;
    expect(problems({})).toEqual([]);
    expect(problems({ 'reorder-tiles': { order: 'grouped', groupSize: 4, rankDevice: [0, 1] }, 'align-chunks': { tiles: 'aligned' } })).toEqual([]);
    expect(problems({ 'reorder-tiles': { order: byKey, rankDevice: undefined }, 'align-chunks': undefined })).toEqual([]);
  });

  it('rejects a misspelt pass name, suggesting the pass meant', () => {
    expect(problems({ 'reorder-tile': { order: 'grouped' } })).toEqual([
      ['options/unknown-pass', undefined, `unknown pass option 'reorder-tile': did you mean 'reorder-tiles'? Options are keyed by the name of a pass that runs; ${KNOWN}`],
    ]);
    expect(problems({ 'Align-Chunk': {} })[0]![2]).toMatch(/did you mean 'align-chunks'\?/);
  });

  it("rejects a pass's field given without the pass's name, saying where it goes", () => {
    expect(problems({ order: 'row-major' })).toEqual([
      [
        'options/unknown-pass',
        undefined,
        `unknown pass option 'order': 'order' is a field of 'reorder-tiles', so write { 'reorder-tiles': { order: ... } }. Options are keyed by the name of a pass that runs; ${KNOWN}`,
      ],
    ]);
  });

  it('rejects a key far from every pass name without guessing', () => {
    expect(problems({ fusion: true })).toEqual([['options/unknown-pass', undefined, `unknown pass option 'fusion'. Options are keyed by the name of a pass that runs; ${KNOWN}`]]);
    expect(problems({ x: 1 }, [])[0]![2]).toBe("unknown pass option 'x'. Options are keyed by the name of a pass that runs; the pipeline is empty");
  });

  it('rejects options for a registered pass that is not in the pipeline, since they would change nothing', () => {
    expect(problems({ 'reorder-tiles': { order: 'grouped' } }, [attachPlan, alignChunksPass])).toEqual([
      [
        'options/unknown-pass',
        undefined,
        "unknown pass option 'reorder-tiles'. Options are keyed by the name of a pass that runs; the passes of this pipeline are 'attach-plan', 'align-chunks'",
      ],
    ]);
  });

  it('rejects a field the pass does not declare, listing those it does', () => {
    expect(problems({ 'reorder-tiles': { ordr: 'grouped', groupsize: 4, tiles: 'aligned' } })).toEqual([
      ['options/unknown-field', 'reorder-tiles', "pass option 'reorder-tiles' has no field 'ordr': did you mean 'order'? (it takes 'order', 'groupSize', 'rankDevice')"],
      ['options/unknown-field', 'reorder-tiles', "pass option 'reorder-tiles' has no field 'groupsize': did you mean 'groupSize'? (it takes 'order', 'groupSize', 'rankDevice')"],
      ['options/unknown-field', 'reorder-tiles', "pass option 'reorder-tiles' has no field 'tiles' (it takes 'order', 'groupSize', 'rankDevice')"],
    ]);
  });

  it('rejects a value the field does not take, saying what it takes', () => {
    expect(problems({ 'reorder-tiles': { order: 'row-majr' } })).toEqual([
      [
        'options/bad-value',
        'reorder-tiles',
        "pass option 'reorder-tiles'.order must be one of 'row-major', 'column-major', 'grouped', 'chunk-arrival', or a function, not 'row-majr': did you mean 'row-major'?",
      ],
    ]);
    expect(problems({ 'reorder-tiles': { groupSize: 0, rankDevice: [0, -1] }, 'align-chunks': { tiles: true } }).map(([, , m]) => m)).toEqual([
      "pass option 'reorder-tiles'.groupSize must be an integer >= 1, not 0",
      "pass option 'reorder-tiles'.rankDevice must be a list, each item an integer >= 0, not [0, -1]",
      "pass option 'align-chunks'.tiles must be one of 'any', 'aligned', not true",
    ]);
  });

  it('rejects options that are not objects', () => {
    expect(problems('grouped')).toEqual([['options/not-an-object', undefined, "pass options must be an object keyed by pass name, not 'grouped'"]]);
    expect(problems([])[0]![0]).toBe('options/not-an-object');
    expect(problems({ 'reorder-tiles': 'grouped' })).toEqual([
      ['options/not-an-object', 'reorder-tiles', "pass option 'reorder-tiles' must be an object of fields (it takes 'order', 'groupSize', 'rankDevice'), not 'grouped'"],
    ]);
  });

  it('reads options that came from JSON as it reads any others', () => {
    expect(problems(JSON.parse('{"reorder-tiles":{"order":"grouped","groupSize":2}}'))).toEqual([]);
    expect(problems(JSON.parse('{"reorder-tiles":{"order":"row-majr"}}')).map(([code]) => code)).toEqual(['options/bad-value']);
  });

  it('gives a pass that declares no options none: any field under its name is rejected', () => {
    expect(attachPlan.options).toBeUndefined();
    expect(problems({ 'attach-plan': {} })).toEqual([]);
    expect(problems({ 'attach-plan': { strict: true } })).toEqual([
      ['options/unknown-field', 'attach-plan', "pass option 'attach-plan' has no field 'strict' (it declares no options)"],
    ]);
  });

  it('reads the fields each built-in pass declares from the pass', () => {
    expect(Object.keys(reorderTiles.options ?? {})).toEqual(['order', 'groupSize', 'rankDevice']);
    expect(Object.keys(alignChunksPass.options ?? {})).toEqual(['tiles']);
    expect(insertBarriers.options).toBeUndefined();
  });
});

describe('runPipeline with pass options', () => {
  it('reports bad options before any pass runs or any IR is printed', () => {
    let runs = 0;
    const counting = definePass('counting', 'counts its runs', (m) => {
      runs++;
      return E.right(m);
    });
    const dumps: string[] = [];
    const diagnostics = left(
      runPipeline([counting, ...PIPELINE], kernel, { plan, options: { 'reorder-tiles': { order: 'row-majr' } } }, { printAfter: 'all', onDump: (pass) => dumps.push(pass) }),
    );
    expect(diagnostics.map((d) => d.code)).toEqual(['options/bad-value']);
    expect([runs, dumps]).toEqual([0, []]);
  });

  it('reports every bad option at once', () => {
    const diagnostics = left(runPipeline(PIPELINE, kernel, { plan, options: { 'reorder-tile': {}, 'align-chunks': { tile: 'aligned' } } }));
    expect(diagnostics.map((d) => d.code)).toEqual(['options/unknown-pass', 'options/unknown-field']);
  });

  it('compiles with valid options as it did: the order asked for is the one written', () => {
    const ordered = runPipeline(PIPELINE, kernel, { plan, options: { 'reorder-tiles': { order: 'grouped', groupSize: 2 } } });
    expect(E.isRight(ordered) && ordered.right.module.kernel.scheduler.order).toEqual({ kind: 'grouped', groupSize: 2 });
    const rowMajor = runPipeline(PIPELINE, kernel, { plan, options: { 'reorder-tiles': { order: 'row-major' } } });
    expect(E.isRight(rowMajor) && rowMajor.right.module.kernel.scheduler.order).toEqual({ kind: 'row-major' });
  });

  it('checks a pass run alone against its own options too, so run never sees what it did not declare', () => {
    const out = reorderTiles.run(kernel, { options: { 'reorder-tiles': { order: 'diagonal' } } });
    expect(E.isLeft(out) && out.left.map((d) => [d.code, d.pass])).toEqual([['options/bad-value', 'reorder-tiles']]);
  });
});

describe('a custom pass that declares its options', () => {
  const suffixFields = { suffix: option.string(), times: option.integer(1), loud: option.boolean() };
  const suffix = definePass('suffix', 'appends options.suffix to the module name, options.times times', suffixFields, (m: Module, _ctx, { suffix = '_x', times = 1, loud = false }) =>
    E.right(
      editModule(m, (d) => {
        const tail = suffix.repeat(times);
        d.name += loud ? tail.toUpperCase() : tail;
      }),
    ),
  );

  it('gets its declared options, typed, and runs with them', () => {
    const out = runPipeline([suffix], kernel, { options: { suffix: { suffix: '_b', times: 2, loud: true } } });
    expect(E.isRight(out) && out.right.module.name).toBe('ag_gemm_B_B');
    const plain = runPipeline([suffix], kernel, { options: {} });
    expect(E.isRight(plain) && plain.right.module.name).toBe('ag_gemm_x');
  });

  it('has a misspelt field or a wrong value rejected as a built-in pass does', () => {
    const diagnostics = left(runPipeline([suffix], kernel, { options: { suffix: { sufix: '_b', times: 1.5, loud: 'yes' } } }));
    expect(diagnostics.map((d) => d.message)).toEqual([
      "pass option 'suffix' has no field 'sufix': did you mean 'suffix'? (it takes 'suffix', 'times', 'loud')",
      "pass option 'suffix'.times must be an integer >= 1, not 1.5",
      "pass option 'suffix'.loud must be true or false, not 'yes'",
    ]);
  });

  it('keeps its declaration frozen on the pass, where the manager reads it', () => {
    expect(Object.isFrozen(suffix.options)).toBe(true);
    expect(suffix.options?.times?.expected).toBe('an integer >= 1');
    expect(option.list(option.number()).accepts([1, 2.5])).toBe(true);
    expect(option.list(option.number()).accepts([1, Infinity])).toBe(false);
  });
});
