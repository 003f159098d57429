/** The emitted WGSL names, before each op's code, the IR op it lowers and where the op was written. */
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { gemmKernel, parse, print, type Module } from '@syncopate/ir';
import { alignChunksPass, attachPlan, insertBarriers, reorderTiles, ringAllGather, runPipeline } from '@syncopate/passes';
import { emitFusedKernel } from '../src/index.js';

/** An AllGather + GEMM through the passes, printed and parsed back, so every op has a source location. */
function agFromText(): { module: Module; text: string } {
  const r = runPipeline([attachPlan, alignChunksPass, reorderTiles, insertBarriers], gemmKernel({ m: 128, n: 64, k: 64, blockM: 32, blockN: 32, blockK: 16 }, { ranks: 2, distribute: 'ag', name: 'ag_gemm' }), {
    plan: ringAllGather({ ranks: 2, tensor: { name: 'A', shape: [128, 64] }, axis: 0 }),
    options: {},
  });
  if (E.isLeft(r)) throw new Error(r.left.map((d) => d.message).join('\n'));
  const text = print(r.right.module);
  return { module: parse(text), text };
}

function wgslOf(module: Module): string {
  const fused = emitFusedKernel(module);
  if (E.isLeft(fused)) throw new Error(fused.left.map((d) => d.message).join('\n'));
  return fused.right.wgsl;
}

describe('WGSL comments that tie code to IR ops', () => {
  it('precede the code of every op of the kernel body with its printed form and its line and column', () => {
    const { module, text } = agFromText();
    const wgsl = wgslOf(module);
    const lines = text.split('\n');
    // The body starts at its first op (the kernel's header may span lines: a tile order per rank).
    const bodyAt = lines.findIndex((l) => l.trim() === '%pm = program_id 0');
    // Every op line of the kernel body (not the closing braces) shows up as a comment with its location.
    const ops = lines.map((l, i) => ({ l: l.trim(), line: i + 1 })).filter(({ l, line }) => line > bodyAt && l !== '}' && l !== '');
    expect(ops.length).toBeGreaterThan(8);
    for (const { l, line } of ops) {
      const op = l.replace(/ \{$/, '');
      const column = lines[line - 1]!.indexOf(l) + 1;
      expect(wgsl).toContain(`// ${op}  (`);
      expect(wgsl).toMatch(new RegExp(`// ${escape(op)}  \\((?:[a-z ,]+, )?loc ${line}:${column}\\)`));
    }
  });

  it('puts the comment right before the code it names', () => {
    const wgsl = wgslOf(agFromText().module).split('\n');
    const after = (prefix: string) => wgsl[wgsl.findIndex((l) => l.trim().startsWith(prefix)) + 1]!.trim();
    expect(after('// %pm = program_id 0')).toBe('let v_pm = i32(tables[slot + 0u]);');
    expect(after('// %acc = constant 0')).toMatch(/^var v_acc: array<f32, \d+>;$/);
    // A run of waits: each wait's op comment (the first few), then where the tile's entries are.
    expect(after('// wait %c0 when %pm in [0, 2)')).toMatch(/^\/\/ wait %c1 when %pm in \[2, 4\)/);
    expect(after('// wait %c1 when %pm in [2, 4)')).toMatch(/^\/\/ This tile's waits: row tile_row at WAITS_0/);
    expect(after('// %d = dot %a, %b, %acc_it')).toMatch(/^for \(var kk = 0u;/);
    expect(after('// store %acc_out, @C[32*%pm, 32*%pn]')).toMatch(/^for \(var i = 0u;/);
  });

  it('print a loop by its header only, and without locations when the module has none', () => {
    const { module } = agFromText();
    const wgsl = wgslOf(stripLocs(module));
    expect(wgsl).toContain('// %acc_out = for %k = 0 to 64 step 16 iter(%acc_it = %acc) -> (tile<32x32xf32>)\n');
    expect(wgsl).not.toContain('loc ');
    // The loop's body ops are printed once each where their code is, not again inside the loop's comment.
    expect(wgsl.match(/\/\/ %d = dot/g)).toHaveLength(1);
  });
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The module with every op's `loc` removed, as the builder makes them. */
function stripLocs(m: Module): Module {
  const strip = (ops: Module['kernel']['body']): Module['kernel']['body'] =>
    ops.map((op) => {
      const { loc: _loc, ...rest } = op;
      return (rest.op === 'for' ? { ...rest, body: strip(rest.body) } : rest) as typeof op;
    });
  return { ...m, kernel: { ...m.kernel, body: strip(m.kernel.body) } };
}

describe('a name with a character WGSL reads as a line break', () => {
  it('keeps each comment on one line', () => {
    const { text } = agFromText();
    // U+2028 inside a quoted name (the IR's names are JSON strings when not bare words).
    const module = parse(text.replaceAll('%pm', '%"p\\u2028m"'));
    const wgsl = wgslOf(module);
    expect(wgsl).not.toMatch(/[\u0085\u2028\u2029\v\f\r]/);
    expect(wgsl).toContain('// %"p m" = program_id 0  (loc ');
  });
});
