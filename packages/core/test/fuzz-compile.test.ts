/**
 * Fuzzing what users hand the compiler: random well-typed modules of every op (the IR package's
 * `arbModule`) through the whole pipeline and the WGSL backend, and text of such modules, mangled,
 * through `syncopate compile --ir`. Whatever the input, the answer is a verdict (a compiled kernel,
 * diagnostics, a typed error), never an exception from inside the compiler and never a stack trace.
 *
 * FUZZ_RUNS sets the cases per property (default 100); FUZZ_SEED and FUZZ_PATH replay a failure.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { afterAll, describe, expect, it } from 'vitest';
import { compile, CompileError, print, type Module } from '@syncopate/core';
import { arbModule } from '../../ir/test/arbitrary.js';
import { main } from '../src/tools/cli/main.js';
import { lowerToWgsl } from '../src/tools/run.js';
import { envCount, fuzzParameters } from './fuzz-gemm.js';

const RUNS = envCount('FUZZ_RUNS', 100);

/** Compiles `module` with the chunks it declares; lowers it when it compiles. Throws only what a bug would. */
function compileAndLower(module: Module): 'compiled' | 'rejected' | 'not lowered' {
  const result = compile(module, { ranks: module.ranks, chunks: [] });
  if (E.isLeft(result)) {
    expect(result.left.length).toBeGreaterThan(0);
    return 'rejected';
  }
  try {
    lowerToWgsl(result.right);
    return 'compiled';
  } catch (e) {
    if (e instanceof CompileError) return 'not lowered';
    throw e;
  }
}

describe('fuzz: random modules through the pipeline and the WGSL backend', () => {
  it(`${RUNS} random modules: compiled, rejected with diagnostics, or refused by the backend with diagnostics`, () => {
    const seen = new Map<string, number>();
    fc.assert(
      fc.property(arbModule({ maxOps: 6, maxDepth: 2 }), (module) => {
        const verdict = compileAndLower(module);
        seen.set(verdict, (seen.get(verdict) ?? 0) + 1);
      }),
      fuzzParameters(RUNS),
    );
    if (process.env.FUZZ_VERBOSE) console.log('verdicts', Object.fromEntries(seen));
    expect([...seen.values()].reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(RUNS);
  });
});

describe('fuzz: mangled IR text through syncopate compile --ir', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'syncopate-fuzz-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  type Mangle =
    | { kind: 'drop' | 'repeat'; at: number; length: number }
    | { kind: 'swap'; at: number; to: number }
    | { kind: 'insert'; at: number; text: string };

  /** Ways to break text: drop or repeat a span, swap two characters, or put a stray token in. */
  const arbMangle: fc.Arbitrary<Mangle> = fc.oneof(
    fc.record({ kind: fc.constant('drop' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 12 }) }),
    fc.record({ kind: fc.constant('repeat' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 12 }) }),
    fc.record({ kind: fc.constant('swap' as const), at: fc.nat(), to: fc.nat() }),
    fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), text: fc.constantFrom('%', '@', '{', '}', '(', ')', '[', ']', ',', ':', '-', '0', '99999999999', '-1', 'x', '\n', '"', 'tile<', 'f16', '1.5', 'NaN') }),
  );

  function mangle(text: string, m: Mangle): string {
    const at = m.at % Math.max(1, text.length);
    switch (m.kind) {
      case 'drop':
        return text.slice(0, at) + text.slice(at + m.length);
      case 'repeat':
        return text.slice(0, at + m.length) + text.slice(at, at + m.length) + text.slice(at + m.length);
      case 'swap': {
        const to = m.to % Math.max(1, text.length);
        const chars = [...text];
        [chars[at], chars[to]] = [chars[to]!, chars[at]!];
        return chars.join('');
      }
      case 'insert':
        return text.slice(0, at) + m.text + text.slice(at);
    }
  }

  it(`${RUNS} mangled modules: exit 0 or 1 with a message naming the file, never an internal error or a stack`, async () => {
    let n = 0;
    const codes = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(arbModule({ maxOps: 5, maxDepth: 1 }), fc.array(arbMangle, { minLength: 1, maxLength: 3 }), fc.constantFrom('ir', 'wgsl', 'plan'), async (module, mangles, emit) => {
        const text = mangles.reduce((t, m) => mangle(t, m), print(module));
        const file = join(scratch, `case-${n++}.ir`);
        writeFileSync(file, text);
        const err: string[] = [];
        const code = await main(['compile', '--ir', file, '--emit', emit], { out: () => {}, err: (s) => err.push(s), env: {} });
        codes.set(code, (codes.get(code) ?? 0) + 1);
        const message = err.join('\n');
        expect([0, 1], message).toContain(code);
        if (code === 1) {
          expect(message).toMatch(/^syncopate: /);
          expect(message).toContain(file);
          // `Name: message` is how the CLI reports an error it did not expect: a bug somewhere.
          expect(message).not.toMatch(/^syncopate: [A-Za-z]*Error: /);
          expect(message).not.toMatch(/\n\s+at /);
        }
      }),
      fuzzParameters(RUNS),
    );
    if (process.env.FUZZ_VERBOSE) console.log('exit codes', Object.fromEntries(codes));
    expect(codes.get(1) ?? 0).toBeGreaterThan(0);
  });
});
