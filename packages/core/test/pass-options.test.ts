/**
 * `compile`'s passOptions: a misspelt pass name, field or value is a type error for TypeScript callers
 * (each `@ts-expect-error` below fails `pnpm typecheck` if it stops being one) and a diagnostic at run
 * time for everyone else.
 */
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import {
  compile,
  CompileError,
  compileOrThrow,
  defaultPipeline,
  definePass,
  editModule,
  gemmKernel,
  option,
  print,
  ringAllGather,
  type CompiledKernel,
  type Diagnostic,
  type OptionsOf,
  type PassOptions,
} from '@syncopate/core';

// A framework's own pass, declaring its options, and their key in `passOptions` for TypeScript.
const tagFields = { tag: option.string(), repeat: option.integer(1) };
const tagModule = definePass('tag-module', 'appends options.tag to the module name, options.repeat times', tagFields, (m, _ctx, { tag = '_tagged', repeat = 1 }) =>
  E.right(
    editModule(m, (d) => {
      d.name += tag.repeat(repeat);
    }),
  ),
);
declare module '@syncopate/passes' {
  interface PassOptions {
    readonly 'tag-module'?: OptionsOf<typeof tagFields>;
  }
}

const kernel = gemmKernel({ m: 256, n: 256, k: 128 }, { ranks: 4, distribute: 'ag' });
const plan = ringAllGather({ ranks: 4, tensor: { name: 'A', shape: [256, 128] }, axis: 0 });

function compiled(result: E.Either<readonly Diagnostic[], CompiledKernel>): CompiledKernel {
  if (E.isLeft(result)) throw new Error(result.left.map((d) => d.message).join('\n'));
  return result.right;
}

function diagnostics(result: E.Either<readonly Diagnostic[], CompiledKernel>): [string, string][] {
  if (E.isRight(result)) throw new Error('expected diagnostics, got a compiled kernel');
  return result.left.map((d) => [d.code, d.message]);
}

describe('compile with passOptions', () => {
  it("rejects a misspelt pass name: { 'reorder-tile': ... }", () => {
    const result = compile(kernel, plan, {
      passOptions: {
        // @ts-expect-error: no pass is called 'reorder-tile'
        'reorder-tile': { order: 'row-major' },
      },
    });
    expect(diagnostics(result)).toEqual([
      [
        'options/unknown-pass',
        "unknown pass option 'reorder-tile': did you mean 'reorder-tiles'? Options are keyed by the name of a pass that runs; the passes of this pipeline are 'attach-plan', 'align-chunks', 'reorder-tiles', 'insert-barriers'",
      ],
    ]);
  });

  it("rejects a pass's field given where a pass name goes: { order: 'row-major' }", () => {
    const result = compile(kernel, plan, {
      passOptions: {
        // @ts-expect-error: `order` belongs under 'reorder-tiles'
        order: 'row-major',
      },
    });
    expect(diagnostics(result)).toEqual([
      [
        'options/unknown-pass',
        "unknown pass option 'order': 'order' is a field of 'reorder-tiles', so write { 'reorder-tiles': { order: ... } }. Options are keyed by the name of a pass that runs; the passes of this pipeline are 'attach-plan', 'align-chunks', 'reorder-tiles', 'insert-barriers'",
      ],
    ]);
  });

  it('rejects a field the pass does not declare', () => {
    const result = compile(kernel, plan, {
      passOptions: {
        'reorder-tiles': {
          // @ts-expect-error: the field is `groupSize`
          groupsize: 4,
        },
      },
    });
    expect(diagnostics(result)).toEqual([
      ['options/unknown-field', "pass option 'reorder-tiles' has no field 'groupsize': did you mean 'groupSize'? (it takes 'order', 'groupSize', 'rankDevice')"],
    ]);
  });

  it('rejects a value the field does not take', () => {
    const result = compile(kernel, plan, {
      passOptions: {
        'reorder-tiles': {
          // @ts-expect-error: no such order
          order: 'row-majr',
        },
        'align-chunks': {
          // @ts-expect-error: 'any' or 'aligned'
          tiles: 'straddle',
        },
      },
    });
    expect(diagnostics(result).map(([code]) => code)).toEqual(['options/bad-value', 'options/bad-value']);
    expect(diagnostics(result)[0]![1]).toMatch(/^pass option 'reorder-tiles'\.order must be one of .*, not 'row-majr': did you mean 'row-major'\?$/);
  });

  it('rejects options for a pass that is not in the pipeline it is given', () => {
    const result = compile(kernel, plan, { pipeline: defaultPipeline().slice(0, 2), passOptions: { 'reorder-tiles': { order: 'grouped' } } });
    expect(diagnostics(result).map(([code]) => code)).toEqual(['options/unknown-pass']);
  });

  it('rejects bad options that come untyped, as from a JSON file', () => {
    const fromJson: PassOptions = JSON.parse('{"reorder-tiles": {"order": "row-majr", "group_size": 4}}');
    expect(diagnostics(compile(kernel, plan, { passOptions: fromJson })).map(([code]) => code)).toEqual(['options/bad-value', 'options/unknown-field']);
  });

  it('rejects passOptions that are not an object at all', () => {
    expect(diagnostics(compile(kernel, plan, { passOptions: 'grouped' as unknown as PassOptions }))).toEqual([
      ['options/not-an-object', "pass options must be an object keyed by pass name, not 'grouped'"],
    ]);
  });

  it('makes compileOrThrow throw a CompileError with the diagnostic', () => {
    const passOptions = JSON.parse('{"reorder-tile": {}}') as PassOptions;
    expect(() => compileOrThrow(kernel, plan, { passOptions })).toThrow(CompileError);
    expect(() => compileOrThrow(kernel, plan, { passOptions })).toThrow(/^error\[options\/unknown-pass\]: unknown pass option 'reorder-tile': did you mean 'reorder-tiles'\?/);
  });

  it("takes a custom pass's declared options and rejects its misspelt ones", () => {
    const pipeline = [...defaultPipeline(), tagModule];
    expect(compiled(compile(kernel, plan, { pipeline, passOptions: { 'tag-module': { tag: '_v2', repeat: 2 } } })).module.name).toBe(`${kernel.name}_v2_v2`);
    const misspelt = compile(kernel, plan, {
      pipeline,
      passOptions: {
        'tag-module': {
          // @ts-expect-error: the field is `tag`
          tags: '_v2',
        },
      },
    });
    expect(diagnostics(misspelt)).toEqual([['options/unknown-field', "pass option 'tag-module' has no field 'tags': did you mean 'tag'? (it takes 'tag', 'repeat')"]]);
    const wrongKind = compile(kernel, plan, {
      pipeline,
      passOptions: {
        'tag-module': {
          // @ts-expect-error: a number, not a string
          repeat: 'twice',
        },
      },
    });
    expect(diagnostics(wrongKind)).toEqual([['options/bad-value', "pass option 'tag-module'.repeat must be an integer >= 1, not 'twice'"]]);
  });

  it('compiles valid options to the same kernel as before', () => {
    const plain = compiled(compile(kernel, plan));
    // chunk-arrival is the default, and a field left undefined (as run.ts leaves rankDevice) is the default too.
    const explicit = compiled(compile(kernel, plan, { passOptions: { 'reorder-tiles': { order: 'chunk-arrival', rankDevice: undefined }, 'align-chunks': { tiles: 'any' } } }));
    expect(print(explicit.module)).toBe(print(plain.module));
    const grouped = compiled(compile(kernel, plan, { passOptions: { 'reorder-tiles': { order: 'grouped', groupSize: 4 } } }));
    expect(grouped.module.kernel.scheduler.order).toEqual({ kind: 'grouped', groupSize: 4 });
    expect(print(grouped.module)).not.toBe(print(plain.module));
  });
});
