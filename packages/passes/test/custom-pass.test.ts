// The worked example of docs/custom-pass.md runs here, and the doc's code block must equal the region
// between the markers below, so the doc cannot drift from code that type-checks and runs.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { attachPlan } from '@syncopate/passes';

// Silences the example's console.log while it runs, and keeps what it printed for the assertions.
const logged = vi.spyOn(console, 'log').mockImplementation(() => {});

// #region custom-pass
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import { buildModule, formatDiagnostic, mul, sharded, type ChunkPlan, type Op } from '@syncopate/ir';
import { defaultRegistry, definePass, editModule, option, runPipeline, type Draft, type OptionsOf } from '@syncopate/passes';

// 1. The pass: multiplies the value of every `constant` tile by its option `scale`. It declares the
//    option, so a misspelt field or a scale that is not a finite number never reaches it.
const scaleFields = { scale: option.number() };

export const scaleConstants = definePass(
  'scale-constants',
  'multiplies every constant tile by options.scale (default 1), inside loop bodies too',
  scaleFields,
  // editModule hands us a draft: edit it in place; the module we were given stays as it was.
  (module, _ctx, { scale = 1 }) => E.right(editModule(module, (draft) => scaleIn(draft.kernel.body, scale))),
);

// For TypeScript callers: `compile`'s passOptions now takes { 'scale-constants': { scale } }, typed.
declare module '@syncopate/passes' {
  interface PassOptions {
    readonly 'scale-constants'?: OptionsOf<typeof scaleFields>;
  }
}

function scaleIn(ops: Draft<Op>[], scale: number): void {
  for (const op of ops) {
    if (op.op === 'constant') op.value *= scale;
    if (op.op === 'for') scaleIn(op.body, scale);
  }
}

// 2. A kernel to run it on: Y = X + 1, row blocks of 64, X and Y sharded over 2 ranks.
const kernel = buildModule('bias', { ranks: 2 }, (mb) => {
  const X = mb.tensor('X', [128, 64], 'f32', sharded(0));
  const Y = mb.tensor('Y', [128, 64], 'f32', sharded(0));
  mb.kernel('bias', [2], (kb) => {
    const pm = kb.programId(0, 'pm');
    const x = kb.load(X, [mul(pm, 64), 0], [64, 64], 'x');
    const one = kb.constant(1, [1, 64], 'f32', 'one');
    kb.store(Y, [mul(pm, 64), 0], kb.add(x, one, 'y'));
  });
});

// 3. A plan for attach-plan: each rank sends its half of X to the other.
const plan: ChunkPlan = {
  name: 'all-gather(X)',
  ranks: 2,
  chunks: [
    { tensor: 'X', region: { lo: [0, 0], hi: [64, 64] }, src: 0, dst: 1, step: 0 },
    { tensor: 'X', region: { lo: [64, 0], hi: [128, 64] }, src: 1, dst: 0, step: 0 },
  ],
};

// 4. Register the pass beside the built-in ones, read a pipeline from text, run it, print the IR after it.
const registry = defaultRegistry().register(scaleConstants);
const result = pipe(
  registry.parsePipeline('attach-plan,scale-constants'),
  E.chain((passes) =>
    runPipeline(passes, kernel, { plan, options: { 'scale-constants': { scale: 0.5 } } }, {
      printAfter: ['scale-constants'],
      onDump: (pass, ir) => console.log(`// ----- IR after ${pass} -----\n${ir}`),
    }),
  ),
);
if (E.isLeft(result)) throw new Error(result.left.map(formatDiagnostic).join('\n'));
const compiled = result.right.module;
// #endregion custom-pass

const printed = logged.mock.calls.map((args) => args.map(String).join(' '));
logged.mockRestore();

const constantsOf = (ops: readonly Op[]): number[] =>
  ops.flatMap((op) => (op.op === 'constant' ? [op.value] : op.op === 'for' ? constantsOf(op.body) : []));

describe('the custom pass of docs/custom-pass.md', () => {
  it('scales the constants of a new module and leaves the input alone', () => {
    expect(constantsOf(compiled.kernel.body)).toEqual([0.5]);
    expect(constantsOf(kernel.kernel.body)).toEqual([1]);
    expect(compiled.chunks.map((c) => c.value.name)).toEqual(['c0', 'c1']);
    expect(Object.isFrozen(compiled.kernel.body)).toBe(true);
  });

  it('printed the IR after scale-constants and nothing else', () => {
    expect(printed).toHaveLength(1);
    expect(printed[0]).toMatch(/^\/\/ ----- IR after scale-constants -----\n/);
    expect(E.isRight(result) && result.right.dumps.map((d) => d.pass)).toEqual(['scale-constants']);
  });

  it('scales constants inside loop bodies too', () => {
    const gemmLike = buildModule('loop', {}, (mb) => {
      const A = mb.tensor('A', [64, 64], 'f32');
      mb.kernel('k', [1], (kb) => {
        const [acc] = kb.for(0, 64, 32, [kb.constant(2, [64, 64])], (_k, [acc]) => [kb.add(acc, kb.constant(3, [1, 1]))]);
        kb.store(A, [0, 0], acc);
      });
    });
    const out = scaleConstants.run(gemmLike, { options: { 'scale-constants': { scale: 10 } } });
    expect(E.isRight(out) && constantsOf(out.right.kernel.body)).toEqual([20, 30]);
  });

  it('rejects a scale that is not a number, run alone or in a pipeline', () => {
    const out = scaleConstants.run(kernel, { options: { 'scale-constants': { scale: 'twice' } } });
    expect(E.isLeft(out) && out.left.map((d) => [d.code, d.pass, d.message])).toEqual([
      ['options/bad-value', 'scale-constants', "pass option 'scale-constants'.scale must be a finite number, not 'twice'"],
    ]);
    const piped = runPipeline([scaleConstants], kernel, { options: { 'scale-constants': { scale: Number.NaN } } });
    expect(E.isLeft(piped) && piped.left.map((d) => d.code)).toEqual(['options/bad-value']);
  });

  it('rejects a misspelt field of its options, and the option put where its pass name should be', () => {
    const misspelt = runPipeline([attachPlan, scaleConstants], kernel, { plan, options: { 'scale-constants': { scael: 0.5 } } });
    expect(E.isLeft(misspelt) && misspelt.left.map((d) => d.message)).toEqual([
      "pass option 'scale-constants' has no field 'scael': did you mean 'scale'? (it takes 'scale')",
    ]);
    const unnested = runPipeline([attachPlan, scaleConstants], kernel, { plan, options: { scale: 0.5 } });
    expect(E.isLeft(unnested) && unnested.left.map((d) => d.message)).toEqual([
      "unknown pass option 'scale': 'scale' is a field of 'scale-constants', so write { 'scale-constants': { scale: ... } }. " +
        "Options are keyed by the name of a pass that runs; the passes of this pipeline are 'attach-plan', 'scale-constants'",
    ]);
  });

  it('is the code docs/custom-pass.md shows', () => {
    const doc = readFileSync(fileURLToPath(new URL('../../../docs/custom-pass.md', import.meta.url)), 'utf8');
    const self = readFileSync(fileURLToPath(import.meta.url), 'utf8');
    expect(codeBlockAfter(doc, '<!-- code: packages/passes/test/custom-pass.test.ts#custom-pass -->')).toBe(region(self, 'custom-pass'));
  });
});

/** The text between `// #region name` and `// #endregion name`. */
function region(source: string, name: string): string {
  const match = new RegExp(`// #region ${name}\\n([\\s\\S]*?)// #endregion ${name}`).exec(source);
  if (!match) throw new Error(`no region '${name}'`);
  return match[1]!;
}

/** The body of the first fenced code block after `marker`. */
function codeBlockAfter(markdown: string, marker: string): string {
  const at = markdown.indexOf(marker);
  if (at < 0) throw new Error(`no '${marker}' in the doc`);
  const match = /```[a-z]*\n([\s\S]*?)```/.exec(markdown.slice(at));
  if (!match) throw new Error(`no code block after '${marker}'`);
  return match[1]!;
}
