import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it, vi } from 'vitest';
import { error, gemmKernel, print, verify, SyncopateError, type ChunkPlan, type Diagnostic, type Module } from '@syncopate/ir';
import {
  attachPlan,
  defaultRegistry,
  definePass,
  editModule,
  formatPipeline,
  formatTimings,
  INPUT_STAGE,
  PassRegistry,
  runPipeline,
  type Pass,
  type PipelineResult,
} from '@syncopate/passes';

const kernel = gemmKernel({ m: 128, n: 128, k: 64 }, { ranks: 2, distribute: 'ag' });
const plan: ChunkPlan = {
  ranks: 2,
  chunks: [
    { tensor: 'A', region: { lo: [0, 0], hi: [64, 64] }, src: 0, dst: 1, step: 0 },
    { tensor: 'A', region: { lo: [64, 0], hi: [128, 64] }, src: 1, dst: 0, step: 0 },
  ],
};
const ctx = { plan, options: {} };

/** Appends `suffix` to the module name: a visible, valid edit. */
const renamePass = (name: string, suffix: string): Pass =>
  definePass(name, `appends '${suffix}' to the module name`, (m) =>
    E.right(
      editModule(m, (d) => {
        d.name += suffix;
      }),
    ),
  );

/** Drops the program_id ops, so %pm and %pn are used but never defined: what verify must catch. */
const dropProgramIds = definePass('drop-program-ids', 'deliberately breaks SSA', (m) =>
  E.right(
    editModule(m, (d) => {
      d.kernel.body = d.kernel.body.filter((op) => op.op !== 'program_id');
    }),
  ),
);

function expectRight<T>(e: E.Either<readonly Diagnostic[], T>): T {
  if (E.isLeft(e)) throw new Error(`expected success, got:\n${e.left.map((d) => d.message).join('\n')}`);
  return e.right;
}

function expectLeft<T>(e: E.Either<readonly Diagnostic[], T>): readonly Diagnostic[] {
  if (E.isRight(e)) throw new Error('expected diagnostics, got success');
  return e.left;
}

describe('runPipeline', () => {
  it('leaves its input as it was and returns a frozen module', () => {
    const input = structuredClone(kernel) as Module; // unfrozen, so an in-place edit would go unnoticed
    const snapshot = structuredClone(input);
    const result = expectRight(runPipeline([attachPlan, renamePass('rename', '_x')], input, ctx));
    expect(input).toEqual(snapshot);
    expect(Object.isFrozen(input)).toBe(false);
    expect(result.module.name).toBe('gemm_x');
    expect(result.module.chunks).toHaveLength(2);
    expect(Object.isFrozen(result.module)).toBe(true);
    expect(Object.isFrozen(result.module.chunks[0]!.region.lo)).toBe(true);
  });

  it('keeps a frozen input frozen and equal to its snapshot', () => {
    const snapshot = structuredClone(kernel);
    expectRight(runPipeline([attachPlan, renamePass('rename', '_x')], kernel, ctx));
    expect(kernel).toEqual(snapshot);
    expect(Object.isFrozen(kernel)).toBe(true);
    expect(Object.isFrozen(kernel.chunks)).toBe(true);
  });

  it('runs the passes in order', () => {
    const result = expectRight(runPipeline([renamePass('a', '_a'), renamePass('b', '_b')], kernel, ctx));
    expect(result.module.name).toBe('gemm_a_b');
  });

  it('returns the input itself through an empty pipeline', () => {
    const result = expectRight(runPipeline([], kernel, ctx));
    expect(result).toEqual({ module: kernel, dumps: [], timings: [] });
  });

  it('stops at a pass whose output fails verification and names that pass', () => {
    const rejectBroken = (m: Module): Diagnostic[] =>
      m.name.endsWith('_broken') ? [error('verify/test', `@${m.name} is broken`, { op: 'module' })] : [];
    const after = vi.fn(renamePass('after', '_after').run);
    const passes = [renamePass('fine', '_fine'), renamePass('breaks', '_broken'), definePass('after', 'never runs', after)];
    const diagnostics = expectLeft(runPipeline(passes, kernel, ctx, { verifier: rejectBroken }));
    expect(diagnostics).toEqual([{ severity: 'error', code: 'verify/test', message: '@gemm_fine_broken is broken', op: 'module', pass: 'breaks' }]);
    expect(after).not.toHaveBeenCalled();
  });

  it('verifies the input before the first pass', () => {
    const first = vi.fn(renamePass('first', '_1').run);
    const rejectAll = (): Diagnostic[] => [error('verify/test', 'bad input')];
    const diagnostics = expectLeft(runPipeline([definePass('first', 'never runs', first)], kernel, ctx, { verifier: rejectAll }));
    expect(diagnostics.map((d) => d.pass)).toEqual([INPUT_STAGE]);
    expect(first).not.toHaveBeenCalled();
  });

  it('does not verify again after a pass that hands back the frozen module it was given', () => {
    const verifier = vi.fn((_: Module): Diagnostic[] => []);
    const identity = definePass('identity', 'changes nothing', (m) => E.right(m));
    expectRight(runPipeline([identity, renamePass('rename', '_x'), identity], kernel, ctx, { verifier }));
    // The input, then the rename; not the identities.
    expect(verifier.mock.calls.map(([m]) => m.name)).toEqual(['gemm', 'gemm_x']);
    // A module that is not frozen could have been changed in place: it is verified again.
    verifier.mockClear();
    expectRight(runPipeline([identity], structuredClone(kernel), ctx, { verifier }));
    expect(verifier).toHaveBeenCalledTimes(2);
  });

  it('lets an invalid module through when verifyEach is false', () => {
    const rejectBroken = (m: Module): Diagnostic[] => (m.name.endsWith('_broken') ? [error('verify/test', 'broken')] : []);
    const result = expectRight(runPipeline([renamePass('breaks', '_broken')], kernel, ctx, { verifyEach: false, verifier: rejectBroken }));
    expect(result.module.name).toBe('gemm_broken');
  });

  it('does not stop for verifier warnings', () => {
    const warn = (): Diagnostic[] => [{ severity: 'warning', code: 'verify/test', message: 'odd but legal' }];
    expectRight(runPipeline([renamePass('a', '_a')], kernel, ctx, { verifier: warn }));
  });

  // Runs once @syncopate/ir's verify is more than a stub (it reports nothing for any module until then).
  it.skipIf(verify(E.getOrElse((): Module => kernel)(dropProgramIds.run(kernel, ctx))).length === 0)(
    'catches a pass that breaks SSA with the real verifier, and names the pass',
    () => {
      const diagnostics = expectLeft(runPipeline([attachPlan, dropProgramIds, renamePass('after', '_after')], kernel, ctx));
      expect(diagnostics.length).toBeGreaterThan(0);
      expect(diagnostics.every((d) => d.pass === 'drop-program-ids')).toBe(true);
      expect(diagnostics.some((d) => d.severity === 'error')).toBe(true);
    },
  );

  it('tags the diagnostics a pass returns with its name, keeping names already set', () => {
    const failing = definePass('failing', 'always fails', () =>
      E.left([error('test/one', 'first'), { ...error('test/two', 'second'), pass: 'inner' }]),
    );
    const diagnostics = expectLeft(runPipeline([attachPlan, failing], kernel, ctx));
    expect(diagnostics.map((d) => [d.code, d.pass])).toEqual([
      ['test/one', 'failing'],
      ['test/two', 'inner'],
    ]);
  });

  it('turns a failure without diagnostics into pass/failed', () => {
    const silent = definePass('silent', 'fails and says nothing', () => E.left([]));
    const diagnostics = expectLeft(runPipeline([silent], kernel, ctx));
    expect(diagnostics).toEqual([expect.objectContaining({ code: 'pass/failed', pass: 'silent' })]);
  });

  it('turns a throwing pass into one pass/crashed diagnostic without a stack trace', () => {
    const later = vi.fn(renamePass('later', '_l').run);
    const crashing = definePass('crashing', 'throws', () => {
      throw new TypeError('cannot read tile of undefined');
    });
    const diagnostics = expectLeft(runPipeline([crashing, definePass('later', 'never runs', later)], kernel, ctx));
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]).toMatchObject({ severity: 'error', code: 'pass/crashed', pass: 'crashing' });
    expect(diagnostics[0]!.message).toBe("pass 'crashing' crashed: cannot read tile of undefined");
    expect(later).not.toHaveBeenCalled();
  });

  it('reports a pass that mutates its frozen input as crashed', () => {
    const mutating = definePass('mutating', 'edits in place', (m) => {
      (m as { name: string }).name = 'changed';
      return E.right(m);
    });
    const diagnostics = expectLeft(runPipeline([mutating], kernel, ctx));
    expect(diagnostics[0]).toMatchObject({ code: 'pass/crashed', pass: 'mutating' });
    expect(kernel.name).toBe('gemm');
  });

  it('reports a thrown non-Error and a result that is not an Either', () => {
    const throwsString = definePass('throws-string', '', () => {
      throw 'plain string';
    });
    expect(expectLeft(runPipeline([throwsString], kernel, ctx))[0]!.message).toBe("pass 'throws-string' crashed: plain string");
    const returnsModule = definePass('returns-module', '', (m) => m as unknown as E.Either<Diagnostic[], Module>);
    expect(expectLeft(runPipeline([returnsModule], kernel, ctx))[0]).toMatchObject({ code: 'pass/bad-result', pass: 'returns-module' });
  });

  it("prints after every pass with printAfter 'all', in order, and streams each dump to onDump", () => {
    const onDump = vi.fn();
    const passes = [renamePass('a', '_a'), renamePass('b', '_b'), renamePass('c', '_c')];
    const result = expectRight(runPipeline(passes, kernel, ctx, { printAfter: 'all', onDump }));
    const names = ['gemm_a', 'gemm_a_b', 'gemm_a_b_c'];
    const expected = names.map((name, i) => ({ pass: passes[i]!.name, ir: print({ ...kernel, name }) }));
    expect(result.dumps).toEqual(expected);
    expect(onDump.mock.calls).toEqual(expected.map((d) => [d.pass, d.ir]));
  });

  it('prints after the passes named, and after each run of a pass that runs twice', () => {
    const a = renamePass('a', '_a');
    const result = expectRight(runPipeline([a, renamePass('b', '_b'), a], kernel, ctx, { printAfter: ['a'] }));
    expect(result.dumps.map((d) => d.pass)).toEqual(['a', 'a']);
    expect(result.dumps.map((d) => d.ir)).toEqual([print({ ...kernel, name: 'gemm_a' }), print({ ...kernel, name: 'gemm_a_b_a' })]);
  });

  it('prints nothing when printAfter is not given', () => {
    const onDump = vi.fn();
    expect(expectRight(runPipeline([attachPlan], kernel, ctx, { onDump })).dumps).toEqual([]);
    expect(onDump).not.toHaveBeenCalled();
  });

  it('rejects a printAfter name that is not in the pipeline before running anything', () => {
    const a = vi.fn(renamePass('a', '_a').run);
    const diagnostics = expectLeft(runPipeline([definePass('a', '', a)], kernel, ctx, { printAfter: ['a', 'atach-plan', 'b'] }));
    expect(diagnostics.map((d) => d.code)).toEqual(['pipeline/unknown-pass', 'pipeline/unknown-pass']);
    expect(diagnostics[0]!.message).toContain("'atach-plan'");
    expect(a).not.toHaveBeenCalled();
  });

  it('times every pass once, in order', () => {
    const passes = [attachPlan, renamePass('a', '_a'), renamePass('b', '_b')];
    const result: PipelineResult = expectRight(runPipeline(passes, kernel, ctx));
    expect(result.timings.map((t) => t.pass)).toEqual(['attach-plan', 'a', 'b']);
    for (const t of result.timings) expect(t.ms).toBeGreaterThanOrEqual(0);
  });
});

describe('formatPipeline and formatTimings', () => {
  it('writes a pipeline as comma-separated names', () => {
    expect(formatPipeline([attachPlan, renamePass('a', '_a')])).toBe('attach-plan,a');
    expect(formatPipeline([])).toBe('');
  });

  it('aligns timings in columns with a total', () => {
    const table = formatTimings([
      { pass: 'attach-plan', ms: 1.5 },
      { pass: 'reorder', ms: 0.5 },
    ]);
    expect(table.split('\n')).toEqual([
      'pass            ms  share',
      'attach-plan  1.500  75.0%',
      'reorder      0.500  25.0%',
      'total        2.000',
    ]);
  });
});

describe('definePass', () => {
  it('rejects names that pipeline text could not hold', () => {
    expect(() => definePass('a,b', '', (m) => E.right(m))).toThrow(SyncopateError);
    expect(() => definePass('', '', (m) => E.right(m))).toThrow(SyncopateError);
    expect(() => definePass('has space', '', (m) => E.right(m))).toThrow(SyncopateError);
    expect(definePass('ok-name_2.x', 'fine', (m) => E.right(m)).name).toBe('ok-name_2.x');
  });
});

describe('PassRegistry', () => {
  const registry = () => defaultRegistry().register(renamePass('rename', '_r'));

  it('holds the built-in passes and the ones registered', () => {
    expect(defaultRegistry().names()).toEqual(['attach-plan', 'align-chunks', 'reorder-tiles', 'insert-barriers']);
    expect(registry().names()).toEqual([...['attach-plan', 'align-chunks', 'reorder-tiles', 'insert-barriers'], 'rename']);
    expect(registry().get('attach-plan')).toBe(attachPlan);
    expect(registry().get('nope')).toBeUndefined();
  });

  it('gives each caller its own default registry', () => {
    registry();
    expect(defaultRegistry().names()).toEqual(['attach-plan', 'align-chunks', 'reorder-tiles', 'insert-barriers']);
  });

  it('refuses a second pass of the same name', () => {
    expect(() => registry().register(renamePass('rename', '_other'))).toThrow(/already registered/);
    expect(() => new PassRegistry().register(attachPlan).register(attachPlan)).toThrow(SyncopateError);
  });

  it('parses pipeline text, spaces allowed around names', () => {
    const passes = expectRight(registry().parsePipeline(' attach-plan,rename , attach-plan '));
    expect(passes.map((p) => p.name)).toEqual(['attach-plan', 'rename', 'attach-plan']);
    expect(expectRight(registry().parsePipeline('  '))).toEqual([]);
  });

  it('reads back what formatPipeline writes', () => {
    const r = registry();
    const passes = [r.get('rename')!, attachPlan];
    expect(expectRight(r.parsePipeline(formatPipeline(passes)))).toEqual(passes);
  });

  it('reports every unknown name, listing the known ones', () => {
    const diagnostics = expectLeft(registry().parsePipeline('attach-plan,renam,reorder'));
    expect(diagnostics.map((d) => d.code)).toEqual(['pipeline/unknown-pass', 'pipeline/unknown-pass']);
    expect(diagnostics[0]!.message).toBe("unknown pass 'renam'; known passes: attach-plan, align-chunks, reorder-tiles, insert-barriers, rename");
    expect(diagnostics[1]!.message).toContain("'reorder'");
  });

  it('reports an empty name', () => {
    const diagnostics = expectLeft(registry().parsePipeline('attach-plan,,rename,'));
    expect(diagnostics.map((d) => d.code)).toEqual(['pipeline/syntax', 'pipeline/syntax']);
    expect(diagnostics[0]!.message).toContain('position 2');
    expect(diagnostics[1]!.message).toContain('position 4');
  });
});
