import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../src/tools/cli/args.js';
import { benchRuns, configurations } from '../src/tools/cli/bench-args.js';
import { benchTable, overlapEfficiency, summarizeBench, formatBenchSummary, type BenchReport } from '../src/tools/bench.js';
import { WORKLOAD_NAMES } from '../src/workloads/index.js';
import { cli } from './cli-harness.js';

describe('syncopate bench: the command line', () => {
  it('sweeps every order and chunk count given, for every workload of all, each with its own defaults', () => {
    const cmd = parseCommandLine(['bench', 'all', '--order', 'row-major,grouped', '--chunks-per-rank', '1,2', '--k', '64']);
    if (cmd.kind !== 'bench') throw new Error(cmd.kind);
    const runs = benchRuns(cmd);
    expect(runs).toHaveLength(WORKLOAD_NAMES.length * 4);
    expect(new Set(runs.map((r) => r.workload))).toEqual(new Set(WORKLOAD_NAMES));
    expect(runs.every((r) => r.shape.k === 64)).toBe(true);
    expect(runs.filter((r) => r.workload === 'ag-gemm').map((r) => `${r.order}/${r.chunksPerRank}`)).toEqual(['row-major/1', 'row-major/2', 'grouped/1', 'grouped/2']);
  });

  it('passes --verify-rows and --no-robustness to every run of bench and tune, and --verify-rows to run', () => {
    for (const kind of ['bench', 'tune'] as const) {
      const cmd = parseCommandLine([kind, 'gemm-rs', '--verify-rows', '16', '--no-robustness']);
      if (cmd.kind !== kind) throw new Error(cmd.kind);
      expect(configurations(cmd)).toEqual([expect.objectContaining({ workload: 'gemm-rs', verifyRows: 16, robustness: false })]);
    }
    const run = parseCommandLine(['run', 'ag-gemm', '--verify-rows', '3']);
    if (run.kind !== 'run') throw new Error(run.kind);
    expect(run.options.verifyRows).toBe(3);
    expect('verifyRows' in configurations(parseCommandLine(['bench', 'gemm-rs']) as Parameters<typeof configurations>[0])[0]!).toBe(false);
  });

  it('--gather and --reduction reach the workloads that take them: named, refused elsewhere; with all, the others keep their plans', () => {
    const run = parseCommandLine(['run', 'ring-attn', '--gather', 'one-shot']);
    if (run.kind !== 'run') throw new Error(run.kind);
    expect(run.options.gather).toBe('one-shot');
    const compile = parseCommandLine(['compile', 'gemv-ar', '--reduction', 'ring']);
    if (compile.kind !== 'compile' || compile.source.kind !== 'workload') throw new Error(compile.kind);
    expect(compile.source.options.reduction).toBe('ring');
    const all = parseCommandLine(['bench', 'all', '--gather', 'one-shot', '--reduction', 'one-shot']);
    if (all.kind !== 'bench') throw new Error(all.kind);
    const plans = Object.fromEntries(configurations(all).map((r) => [r.workload, `${r.gather ?? '-'}/${r.reduction ?? '-'}`]));
    expect(plans).toEqual({ 'ag-gemm': 'one-shot/-', 'gemm-rs': '-/one-shot', 'gemv-ar': '-/one-shot', 'a2a-gemm': '-/-', 'embed-a2a': '-/-', 'ring-attn': 'one-shot/-' });
    expect(() => parseCommandLine(['bench', 'gemm-rs', '--gather', 'one-shot'])).toThrow('--gather applies to ag-gemm and ring-attn, not gemm-rs');
    expect(() => parseCommandLine(['run', 'ag-gemm', '--reduction', 'ring'])).toThrow('--reduction applies to gemm-rs and gemv-ar, not ag-gemm');
    expect(() => parseCommandLine(['run', 'ag-gemm', '--gather', 'tree'])).toThrow("--gather must be one of ring, one-shot, got 'tree'");
    expect(() => parseCommandLine(['compile', '--ir', 'k.ir', '--gather', 'ring'])).toThrow('--gather does not apply with --ir');
  });

  it.each([
    [['bench', 'ag-gemm', '--verify-rows', '0'], /--verify-rows must be a positive integer/],
    [['bench'], /bench needs a workload or all/],
    [['bench', 'nope'], /unknown workload 'nope'/],
    [['bench', 'ag-gemm', '--order', 'row-major,sideways'], /--order must be one of/],
    [['bench', 'ag-gemm', '--chunks-per-rank', '1,,2'], /comma-separated list without empty items/],
    [['bench', 'ag-gemm', '--runs', '0'], /--runs must be a positive integer/],
    [['bench', 'ag-gemm', '--ranks', '2', '--devices', '3'], /more than the 2 ranks/],
    [['bench', 'ag-gemm', '--backend', 'peer-copy'], /--backend does not apply to bench/],
    [['bench', 'ag-gemm', '--out', ' '], /--out needs a directory/],
  ])('%j is refused with exit code 2', async (argv, message) => {
    const r = await cli(...argv);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
  });
});

describe('syncopate bench: overlap figures', () => {
  it('efficiency is the time saved over the shorter of compute and communication', () => {
    // 10 ms sequential = 6 compute + 4 comm; fused at 6 hides all 4 ms of comm.
    expect(overlapEfficiency(10, 6, 6)).toEqual({ commOnlyMs: 4, efficiency: 1 });
    expect(overlapEfficiency(10, 8, 6).efficiency).toBeCloseTo(0.5);
    // Nothing to hide: undefined, not infinite.
    expect(overlapEfficiency(6, 6, 6.5).efficiency).toBeNaN();
  });

  it('summarizes speedups as a geometric mean and counts rows where fused beats decomposed', () => {
    const row = (overSequential: number, overDecomposed: number) => ({ speedup: { overSequential, overDecomposed }, variants: { fused: { verified: true } } }) as unknown as BenchReport;
    const s = summarizeBench([row(2, 1.5), row(8, 0.5)]);
    expect(s.geomeanOverSequential).toBeCloseTo(4);
    expect(s.bestOverSequential).toBe(8);
    expect(s.fusedFasterThanDecomposed).toBe(1);
    expect(s.allVerified).toBe(true);
  });

  it('tables the communication of the fused variant beside that of the sequential, and says where fused and decomposed are one program', () => {
    const ms = (median: number) => ({ median, min: median, max: median, runs: 3 });
    const variant = (median: number) => ({ ms: ms(median), verified: true, maxAbsError: 0, backend: 'peer-copy', phases: [2, 2] });
    const report = {
      workload: 'ring-attn',
      shape: { m: 64, n: 16, k: 64 },
      ranks: 4,
      devices: 2,
      order: 'chunk-arrival',
      chunksPerRank: 1,
      variants: { sequential: variant(5.5), decomposed: variant(4.1), fused: variant(2.9) },
      speedup: { overSequential: 5.5 / 2.9, overDecomposed: 4.1 / 2.9 },
      overlap: { computeOnlyMs: ms(0.68), commOnlyMs: 5.163, commMeasured: true, efficiency: 1, fusedCommOnlyMs: 2.105 },
    } as unknown as BenchReport;
    expect(benchTable([report])).toContain('| 5.163 (fused 2.105) |');
    expect(benchTable([{ ...report, fusedIsDecomposed: true }])).toContain('| 1.41x (same program) |');
    expect(benchTable([{ ...report, fusedIsSequential: true }])).toContain('| 1.90x (same program) |');
    expect(benchTable([report])).not.toContain('same program');
  });

  it('leaves rows where fused and decomposed are the same program out of the fused-beats-decomposed count', () => {
    const row = (overDecomposed: number, same: boolean) =>
      ({ speedup: { overSequential: 1, overDecomposed }, variants: { fused: { verified: true } }, ...(same && { fusedIsDecomposed: true }) }) as unknown as BenchReport;
    const s = summarizeBench([row(1.2, false), row(0.9, false), row(1.1, true), row(0.8, true)]);
    expect(s.fusedFasterThanDecomposed).toBe(1);
    expect(s.sameProgram).toBe(2);
    expect(formatBenchSummary(s)).toContain('faster in 1 of 2 (2 more the same program, counted at 1.00x)');
    // The same-program rows count at 1: (1.2 * 0.9 * 1 * 1) ** (1/4).
    expect(s.geomeanOverDecomposed).toBeCloseTo((1.2 * 0.9) ** 0.25, 10);
  });

  it('counts a row whose fused variant is the sequential program at 1.00x, out of the rows resolved in rounds', () => {
    const row = (overSequential: number, interval: [number, number], same: boolean) =>
      ({ speedup: { overSequential, overDecomposed: 1, overSequentialInterval: interval }, variants: { fused: { verified: true } }, ...(same && { fusedIsSequential: true }) }) as unknown as BenchReport;
    const s = summarizeBench([row(1.3, [1.2, 1.4], false), row(0.9, [0.85, 0.95], true), row(0.96, [0.9, 1.02], true)]);
    expect(s.geomeanOverSequential).toBeCloseTo(1.3 ** (1 / 3), 10);
    expect(s.bestOverSequential).toBe(1.3);
    expect(s.sameAsSequential).toBe(2);
    // The program against itself is not "slower beyond its interval".
    expect(s.resolved).toEqual({ rows: 1, faster: 1, slower: 0 });
    expect(formatBenchSummary(s)).toContain('(of 1 rows in rounds, 1 faster and 0 slower beyond their 95% intervals) (2 more the same program, counted at 1.00x)');
  });
});

describe('syncopate bench on the software adapter', () => {
  it('runs a tile-order ablation: every variant verified, JSON with variants and overlap, files written', async () => {
    const out = mkdtempSync(join(tmpdir(), 'syncopate-bench-'));
    const r = await cli('bench', 'gemm-rs', '--ranks', '2', '--m', '64', '--n', '32', '--k', '32', '--order', 'row-major,chunk-arrival', '--runs', '2', '--warmup', '0', '--json', '--out', out);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const json = JSON.parse(r.out);
    expect(json.summary.rows).toBe(2);
    expect(json.summary.allVerified).toBe(true);
    expect(json.reports.map((x: BenchReport) => x.order)).toEqual(['row-major', 'chunk-arrival']);
    for (const report of json.reports as BenchReport[]) {
      expect(Object.keys(report.variants)).toEqual(['sequential', 'decomposed', 'fused']);
      for (const v of Object.values(report.variants)) expect(v.ms.runs).toBe(2);
      expect(report.overlap!.computeOnlyMs.median).toBeGreaterThan(0);
      expect(report.speedup.overSequential).toBeCloseTo(report.variants.sequential.ms.median / report.variants.fused.ms.median);
    }
    expect(JSON.parse(readFileSync(join(out, 'bench.json'), 'utf8')).reports).toHaveLength(2);
    const md = readFileSync(join(out, 'bench.md'), 'utf8');
    expect(md).toMatch(/\| gemm-rs \| 64x32x32 \| 2 \| 1 \| row-major \| 1 \|/);
    expect(md).toMatch(/fused vs sequential: geometric mean/);
    const svg = readFileSync(join(out, 'speedup.svg'), 'utf8');
    expect(svg.startsWith('<svg')).toBe(true);
    // Two bars per row.
    expect(svg.match(/<rect class="bar"/g)).toHaveLength(4);
    // One more fused run, traced: the trace and its timeline.
    const trace = JSON.parse(readFileSync(join(out, 'trace.json'), 'utf8'));
    const spans = trace.traceEvents.filter((e: { ph: string }) => e.ph === 'X');
    expect(spans.length).toBeGreaterThan(0);
    const timeline = readFileSync(join(out, 'timeline.svg'), 'utf8');
    expect(timeline.match(/<rect x=/g)).toHaveLength(spans.length);
  }, 120_000);
});
