import { describe, expect, it, vi } from 'vitest';
import { gemmKernel, parse, planFromJson, type ChunkPlan } from '@syncopate/core';
import { execute, formatRunReport, main, parseCommandLine, quantile, usage, type CompileCommand } from '../src/tools/cli/main.js';
import { cli } from './cli-harness.js';
import { readRepoFile } from './doc-sync.js';
import { adapterBufferLimits, checkRunFits } from '../src/tools/cli/limits.js';
import { runWorkload } from '../src/tools/run.js';
import { workloads, type Workload } from '../src/workloads/index.js';
import { type RunReport } from '../src/tools/run-report.js';

// The real runWorkload, unless a test hands `run` a report of its own.
vi.mock('../src/tools/run.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../src/tools/run.js')>();
  return { ...actual, runWorkload: vi.fn(actual.runWorkload) };
});

const SMALL = ['--ranks', '2', '--m', '64', '--n', '32', '--k', '32'];

describe('syncopate compile', () => {
  it('--emit ir prints the compiled module, with waits, that parses back', async () => {
    const { code, out, err } = await cli('compile', 'ag-gemm', ...SMALL, '--emit', 'ir');
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toMatch(/^module @ag_gemm ranks\(2\) \{/);
    expect(out).toContain('wait %c0');
    const module = parse(out);
    expect(module.chunks).toHaveLength(2);
    // One tile, which both ranks run when the other's rows arrive: one box, the grouped order.
    expect(module.kernel.scheduler.order.kind).toBe('grouped');
  });

  it('prints the IR by default, and honours --order', async () => {
    const byDefault = await cli('compile', 'gemm-rs', ...SMALL);
    expect(byDefault.code).toBe(0);
    expect(byDefault.out).toContain('arrive %c');
    const rowMajor = await cli('compile', 'gemm-rs', ...SMALL, '--order', 'row-major');
    expect(rowMajor.out).toContain('order(row-major)');
    const grouped = await cli('compile', 'gemm-rs', ...SMALL, '--order', 'grouped');
    expect(grouped.out).toContain('order(grouped 8)');
  });

  it('--emit plan prints JSON that planFromJson reads back', async () => {
    const { code, out } = await cli('compile', 'gemm-rs', '--ranks', '3', '--m', '100', '--n', '72', '--k', '40', '--chunks-per-rank', '2', '--emit', 'plan');
    expect(code).toBe(0);
    const plan = planFromJson(out);
    expect(plan.ranks).toBe(3);
    // One device (compile places none): the one-shot reduce-scatter, gemm-rs's default there.
    expect(plan.name).toBe('one-shot-reduce-scatter(@C, axis=0)');
    expect(plan.chunks).toHaveLength(3 * 2 * 2);
    expect(plan.chunks.every((c) => c.kind === 'reduce-add')).toBe(true);
  });

  it('--dtype f16 makes f16 inputs', async () => {
    const { out } = await cli('compile', 'ag-gemm', ...SMALL, '--dtype', 'f16');
    expect(out).toContain('tensor @A : f16[64, 32] sharded(0)');
  });

  it('--dump-ir-after prints the IR after the passes named, before the output', async () => {
    const one = await cli('compile', 'ag-gemm', ...SMALL, '--dump-ir-after', 'attach-plan');
    expect(one.code).toBe(0);
    expect(one.out.match(/\/\/ ----- IR after /g)).toHaveLength(1);
    expect(one.out.indexOf('// ----- IR after attach-plan -----')).toBe(0);
    const all = await cli('compile', 'ag-gemm', ...SMALL, '--dump-ir-after', 'all', '--emit', 'plan');
    expect([...all.out.matchAll(/\/\/ ----- IR after (\S+) -----/g)].map((m) => m[1])).toEqual([
      'attach-plan',
      'align-chunks',
      'reorder-tiles',
      'insert-barriers',
    ]);
    expect(all.out).toContain('"version": 1');
  });

  it('--time prints a median line', async () => {
    const { code, out } = await cli('compile', 'ag-gemm', ...SMALL, '--time', '--runs', '5');
    expect(code).toBe(0);
    expect(out.split('\n')[0]).toMatch(/^compile ag-gemm ranks=2: median \d+\.\d\d ms \(p10 \d+\.\d\d, p90 \d+\.\d\d\) over 5 runs$/);
    expect(out).toContain('reorder-tiles');
  });

  it('--time runs 50 compiles by default', async () => {
    const { code, out } = await cli('compile', 'gemm-rs', ...SMALL, '--time');
    expect(code).toBe(0);
    expect(out.split('\n')[0]).toMatch(/^compile gemm-rs ranks=2: median .* over 50 runs$/);
  });

  it('--time --json prints one JSON object', async () => {
    const { code, out } = await cli('compile', 'gemm-rs', ...SMALL, '--time', '--runs', '3', '--json');
    expect(code).toBe(0);
    const timing = JSON.parse(out);
    expect(timing).toMatchObject({ workload: 'gemm-rs', ranks: 2, shape: { m: 64, n: 32, k: 32 }, runs: 3, warmups: 5, chunks: 2 });
    expect(timing.medianMs).toBeGreaterThan(0);
    expect(timing.p10Ms).toBeLessThanOrEqual(timing.medianMs);
    expect(timing.p90Ms).toBeGreaterThanOrEqual(timing.medianMs);
    expect(timing.passes.map((p: { pass: string }) => p.pass)).toEqual(['attach-plan', 'align-chunks', 'reorder-tiles', 'insert-barriers']);
  });

  it('--emit wgsl prints the fused WGSL kernel', async () => {
    const { code, out, err } = await cli('compile', 'ag-gemm', ...SMALL, '--emit', 'wgsl');
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toContain('@compute');
  });
});

describe('help', () => {
  it('is the text docs/cli.md shows', () => {
    const doc = readRepoFile('docs/cli.md');
    const shown = /```\n\$ syncopate help\n([\s\S]*?)\n```/.exec(doc)?.[1];
    expect(shown).toBe(usage());
  });

  const argvs = [[], ['help'], ['--help'], ['-h'], ['compile', '--help'], ['run', 'ag-gemm', '-h']];
  it.each(argvs.map((argv) => [argv]))('%j prints the usage', async (argv) => {
    const { code, out, err } = await cli(...argv);
    expect(code).toBe(0);
    expect(err).toBe('');
    expect(out).toContain('syncopate compile <workload> [options]');
    expect(out).toContain('syncopate run <workload> [options]');
    for (const name of ['ag-gemm', 'gemm-rs', '--ranks', '--emit', '--time', '--backend', '--seed', '--dump-ir-after', '--ir FILE', '--plan FILE', 'exit codes']) {
      expect(out).toContain(name);
    }
  });
});

describe('bad usage: one line on stderr, exit code 2', () => {
  const cases: [string[], string][] = [
    [['frobnicate'], "unknown command 'frobnicate'; the commands are compile, run, bench, tune, help"],
    [['compile'], 'compile needs a workload'],
    [['run'], 'run needs a workload'],
    [['compile', 'gemv'], `unknown workload 'gemv'; known workloads: ${Object.keys(workloads).join(', ')}`],
    [['run', 'gemv'], "unknown workload 'gemv'"],
    [['compile', 'ag-gemm', 'extra'], "unexpected argument 'extra'"],
    [['compile', 'ag-gemm', '--frob'], "unknown option '--frob'"],
    [['compile', 'ag-gemm', '-x'], "unknown option '-x'"],
    [['compile', 'ag-gemm', '--ranks'], 'option --ranks needs a value'],
    [['compile', 'ag-gemm', '--ranks', '--time'], 'option --ranks needs a value'],
    [['compile', 'ag-gemm', '--time=yes'], 'option --time takes no value'],
    [['compile', 'ag-gemm', '--ranks', '0'], "--ranks must be a positive integer, got '0'"],
    [['compile', 'ag-gemm', '--ranks', 'two'], "--ranks must be a positive integer, got 'two'"],
    [['compile', 'ag-gemm', '--ranks=-1'], "--ranks must be a positive integer, got '-1'"],
    [['compile', 'ag-gemm', '--m', '100.5'], "--m must be a positive integer, got '100.5'"],
    [['compile', 'ag-gemm', '--n', '0'], "--n must be a positive integer, got '0'"],
    [['compile', 'ag-gemm', '--k', '1e3'], "--k must be a positive integer, got '1e3'"],
    [['compile', 'ag-gemm', '--k', ''], "--k must be a positive integer, got ''"],
    [['compile', 'ag-gemm', '--chunks-per-rank', '0'], "--chunks-per-rank must be a positive integer, got '0'"],
    [['compile', 'ag-gemm', '--m', '99999999999999999999'], '--m must be a positive integer'],
    [['compile', 'ag-gemm', '--ranks', '8', '--m', '4'], 'ag-gemm: M = 4 is smaller than the 8 ranks; every rank needs at least one row'],
    [['compile', 'ag-gemm', '--order', 'spiral'], "--order must be one of row-major, column-major, grouped, chunk-arrival, got 'spiral'"],
    [['compile', 'ag-gemm', '--dtype', 'f64'], "--dtype must be one of f32, f16, got 'f64'"],
    [['compile', 'ag-gemm', '--emit', 'ptx'], "--emit must be one of ir, plan, wgsl, got 'ptx'"],
    [['compile', 'ag-gemm', '--dump-ir-after', 'nope'], "--dump-ir-after: unknown pass 'nope'"],
    [['compile', 'ag-gemm', '--json'], '--json applies to run and to compile --time'],
    [['compile', 'ag-gemm', '--runs', '3'], '--runs applies only with --time'],
    [['compile', 'ag-gemm', '--time', '--runs', '0'], "--runs must be a positive integer, got '0'"],
    [['compile', 'ag-gemm', '--time', '--emit', 'ir'], '--time prints timings only; leave out --emit'],
    [['compile', 'ag-gemm', '--backend', 'peer-copy'], 'option --backend does not apply to compile'],
    [['run', 'ag-gemm', '--emit', 'ir'], 'option --emit does not apply to run'],
    [['run', 'ag-gemm', '--time'], 'option --time does not apply to run'],
    [['run', 'ag-gemm', '--backend', 'nvlink'], "--backend must be one of auto, gpu-signal, peer-copy, got 'nvlink'"],
    [['run', 'ag-gemm', '--seed', '-3'], 'option --seed needs a value'],
    [['run', 'ag-gemm', '--seed', '4294967296'], "--seed must be an integer from 0 to 4294967295, got '4294967296'"],
    [['run', 'gemm-rs', '--ranks', '0'], "--ranks must be a positive integer, got '0'"],
    [['run', 'gemm-rs', '--m', '7.5'], "--m must be a positive integer, got '7.5'"],
    [['run', 'gemm-rs', '--order', 'random'], "--order must be one of"],
    [['run', 'gemm-rs', '--dtype', 'bf16'], "--dtype must be one of f32, f16, got 'bf16'"],
    // Not started by mpirun (this test's process is alone), before any device opens.
    [['run', 'ag-gemm', '--ranks', '2', '--processes', '2'], '--processes 2: this process was not started by mpirun; run mpirun -n 2 syncopate ...'],
    [['bench', 'ag-gemm', '--ranks', '2', '--processes', '2'], '--processes 2: this process was not started by mpirun'],
    [['run', 'ag-gemm', '--processes', '0'], "--processes must be a positive integer, got '0'"],
  ];

  it.each(cases)('%j', async (argv, message) => {
    const { code, out, err } = await cli(...argv);
    expect(code).toBe(2);
    expect(out).toBe('');
    expect(err.split('\n')).toHaveLength(1);
    expect(err).toMatch(/^syncopate: /);
    expect(err).toContain(message);
    expect(err).not.toMatch(/\n\s+at /);
  });
});

describe('parseCommandLine', () => {
  it('fills in the workload defaults and the run options', () => {
    const run = parseCommandLine(['run', 'gemm-rs', '--ranks', '8', '--k', '512', '--backend', 'peer-copy', '--seed', '9', '--json']);
    expect(run).toEqual({
      kind: 'run',
      options: {
        workload: 'gemm-rs',
        ranks: 8,
        shape: { m: 256, n: 256, k: 512 },
        dtype: 'f32',
        order: 'chunk-arrival',
        backend: 'peer-copy',
        seed: 9,
        target: 'auto',
      },
      json: true,
    });
    const compile = parseCommandLine(['compile', 'ag-gemm', '--chunks-per-rank', '4', '--order', 'grouped', '--dump-ir-after', 'align-chunks,insert-barriers']);
    expect(compile).toMatchObject({
      kind: 'compile',
      source: { kind: 'workload', options: { ranks: 4, shape: { m: 256, n: 256, k: 256 }, dtype: 'f32', chunksPerRank: 4 } },
      planFile: undefined,
      order: 'grouped',
      emit: 'ir',
      timedRuns: undefined,
      json: false,
      dumpIrAfter: ['align-chunks', 'insert-barriers'],
    });
  });
});

describe('syncopate run', () => {
  it('runs a small workload and prints the report (or one line saying why it cannot)', async () => {
    const { code, out, err } = await cli('run', 'ag-gemm', '--ranks', '2', '--m', '64', '--n', '32', '--k', '32', '--seed', '3');
    if (code === 0) {
      expect(out).toMatch(/^workload +ag-gemm$/m);
      expect(out).toMatch(/^verified +yes$/m);
      expect(out).toMatch(/^max abs error +0$/m);
    } else {
      // no adapter on this machine, or the runner not built: still one line, never a stack
      expect(err.split('\n')).toHaveLength(1);
      expect(err).toMatch(/^syncopate: /);
    }
  });

  const report: RunReport = {
    workload: 'ag-gemm',
    shape: { m: 256, n: 256, k: 256 },
    ranks: 4,
    devices: 1,
    backend: 'gpu-signal',
    plan: 'ring-all-gather(@A, axis=0)',
    order: 'chunk-arrival',
    dtype: 'f32',
    verified: true,
    maxAbsError: 0,
    fusedMs: 12.3456,
    timings: { median: 12.3456, min: 12.1, max: 13.2, runs: 3 },
    phases: [1],
    timing: 'timestamp-query',
    adapter: 'llvmpipe (LLVM 19.1.7, 256 bits)',
    robustness: true,
  };

  it('passes the options to runWorkload and prints its report; exit code 1 when not verified', async () => {
    vi.mocked(runWorkload).mockResolvedValueOnce(report);
    const ok = await cli('run', 'ag-gemm', '--backend', 'gpu-signal', '--seed', '5', '--order', 'row-major', '--chunks-per-rank', '2');
    expect(ok).toEqual({ code: 0, out: formatRunReport(report), err: '' });
    expect(vi.mocked(runWorkload)).toHaveBeenLastCalledWith({
      workload: 'ag-gemm',
      ranks: 4,
      shape: { m: 256, n: 256, k: 256 },
      dtype: 'f32',
      chunksPerRank: 2,
      order: 'row-major',
      backend: 'gpu-signal',
      seed: 5,
      target: 'auto',
    });
    vi.mocked(runWorkload).mockResolvedValueOnce({ ...report, robustness: false });
    const unchecked = await cli('run', 'gemm-rs', '--no-robustness');
    expect(unchecked.out).toMatch(/^adapter +llvmpipe .* \(no bounds checks\)$/m);
    expect(vi.mocked(runWorkload)).toHaveBeenLastCalledWith(expect.objectContaining({ workload: 'gemm-rs', robustness: false }));
    const wrong = { ...report, verified: false, maxAbsError: 4 };
    vi.mocked(runWorkload).mockResolvedValueOnce(wrong);
    const failed = await cli('run', 'gemm-rs', '--json');
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.out)).toEqual(wrong);
  });

  it('refuses a shape whose tensors no storage buffer of the adapter can hold, before building inputs (exit code 2)', async () => {
    const limits = await adapterBufferLimits();
    if (limits === undefined) return; // no adapter here: the run itself says so
    const { code, out, err } = await cli('run', 'ag-gemm', '--ranks', '2', '--m', '40000', '--n', '40000', '--k', '64');
    expect(code).toBe(2);
    expect(out).toBe('');
    expect(err).toMatch(/^syncopate: ag-gemm 40000x40000x64: C \[40000, 40000\] for the 2 ranks on a device needs a buffer of 12207 MiB, more than the adapter's max\w+ of \d+ MiB$/);
  });

  it('checkRunFits counts the ranks that share a device and the dtype', () => {
    const limits = { maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: 2 ** 27 };
    const o = { workload: 'ag-gemm', ranks: 4, shape: { m: 4096, n: 1024, k: 4096 }, dtype: 'f32', order: 'chunk-arrival', backend: 'auto', seed: 1 } as const;
    // A is 64 MiB a rank: four ranks on one device need 256 MiB, two on each of two devices 128 MiB.
    expect(() => checkRunFits(o, limits)).toThrow("ag-gemm 4096x1024x4096: A [4096, 4096] for the 4 ranks on a device needs a buffer of 256 MiB, more than the adapter's maxStorageBufferBindingSize of 128 MiB");
    expect(() => checkRunFits({ ...o, devices: 2 }, limits)).not.toThrow();
    expect(() => checkRunFits({ ...o, devices: 4, ranksPerDevice: 3 }, limits)).toThrow('for the 3 ranks on a device');
    // In f16, A and B take half the bytes.
    expect(() => checkRunFits({ ...o, ranks: 3, dtype: 'f16' }, limits)).not.toThrow();
    expect(() => checkRunFits({ ...o, ranks: 3 }, limits)).toThrow('needs a buffer of 192 MiB');
  });

  it('checkRunFits sizes the tensors each workload declares, not those of a GEMM', () => {
    // embed-a2a: M is the batch and K the table rows; E [K, D] and P [R·B, D] count, not an M x K matrix
    // (16384 x 65536 f32 would be 4 GiB).
    const o = { workload: 'embed-a2a', ranks: 4, shape: { m: 16384, n: 128, k: 65536 }, dtype: 'f32', order: 'chunk-arrival', backend: 'auto', seed: 1 } as const;
    expect(() => checkRunFits(o, { maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: 2 ** 27 })).not.toThrow();
    expect(() => checkRunFits(o, { maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: 2 ** 26 })).toThrow(/^embed-a2a 16384x128x65536: [EP] \[\d+, 128\] for the 4 ranks on a device needs a buffer of 128 MiB/);
  });

  it('formats a report as an aligned table', () => {
    expect(formatRunReport(report)).toBe(
      [
        'workload       ag-gemm',
        'shape          256x256x256 (MxNxK)',
        'ranks          4',
        'devices        1',
        'backend        gpu-signal',
        'plan           ring-all-gather(@A, axis=0)',
        'order          chunk-arrival',
        'dtype          f32',
        'verified       yes',
        'max abs error  0',
        'fused          12.35 ms (timestamp-query)',
        'adapter        llvmpipe (LLVM 19.1.7, 256 bits)',
      ].join('\n'),
    );
    const failed = formatRunReport({ ...report, verified: false, maxAbsError: 3, timing: 'wall-clock' });
    expect(failed).toContain('verified       NO');
    expect(failed).toContain('max abs error  3');
    expect(failed).toContain('(wall-clock)');
  });
});

describe('failures', () => {
  const io = () => {
    const out: string[] = [];
    const err: string[] = [];
    return { out, err, io: { out: (s: string) => out.push(s), err: (s: string) => err.push(s), env: {} as Record<string, string | undefined> } };
  };

  /** ag-gemm's kernel with a plan that leaves rank 1's shard of A on rank 1: alignment rejects it. */
  const broken: Workload = {
    ...workloads['ag-gemm'],
    build: (o) => {
      const { kernel } = workloads['ag-gemm'].build(o);
      const plan: ChunkPlan = { ranks: 2, chunks: [{ tensor: 'A', region: { lo: [0, 0], hi: [32, 32] }, src: 0, dst: 1, step: 0 }] };
      return { kernel, plan };
    },
  };

  const command = (workload: Workload): CompileCommand => ({
    kind: 'compile',
    source: { kind: 'workload', workload, options: { ranks: 2, shape: { m: 64, n: 32, k: 32 }, dtype: 'f32' } },
    planFile: undefined,
    order: 'chunk-arrival',
    emit: 'ir',
    timedRuns: undefined,
    json: false,
    dumpIrAfter: undefined,
  });

  it('a compile that fails prints the diagnostics and exits 1', async () => {
    const t = io();
    expect(await execute(command(broken), t.io)).toBe(1);
    expect(t.out).toEqual([]);
    expect(t.err[0]).toBe('syncopate: ag-gemm did not compile:');
    expect(t.err.length).toBeGreaterThan(1);
    expect(t.err.slice(1).every((line) => /^ {2}error\[/.test(line))).toBe(true);
    const timed = io();
    expect(await execute({ ...command(broken), timedRuns: 3 }, timed.io)).toBe(1);
    expect(timed.err[0]).toBe('syncopate: ag-gemm did not compile:');
  });

  it('an unexpected exception is one line and exit code 1; its stack only with SYNCOPATE_DEBUG=1', async () => {
    const crashing: Workload = {
      ...workloads['ag-gemm'],
      build: () => {
        throw new TypeError('something broke\nbadly');
      },
    };
    const t = io();
    expect(await execute(command(crashing), t.io)).toBe(1);
    expect(t.err).toEqual(['syncopate: TypeError: something broke badly']);
    const debug = io();
    debug.io.env = { SYNCOPATE_DEBUG: '1' };
    expect(await execute(command(crashing), debug.io)).toBe(1);
    expect(debug.err[0]).toBe('syncopate: TypeError: something broke badly');
    expect(debug.err[1]).toMatch(/\n\s+at /);
  });

  it('a kernel that is not valid IR prints the verifier\'s diagnostics and exits 1', async () => {
    const invalid: Workload = {
      ...workloads['ag-gemm'],
      build: () => ({ kernel: gemmKernel({ m: 64, n: 64, k: 32, blockM: 64, blockN: 64, blockK: 32 }, { ranks: 0 }), plan: { ranks: 0, chunks: [] } }),
    };
    const t = io();
    expect(await execute(command(invalid), t.io)).toBe(1);
    expect(t.err[0]).toBe('syncopate: the kernel is not valid IR:');
  });
});

describe('quantile', () => {
  it('interpolates between neighbours', () => {
    expect(quantile([1, 2, 3, 4, 5], 0.5)).toBe(3);
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantile([0, 10], 0.1)).toBe(1);
    expect(quantile([7], 0.9)).toBe(7);
    expect(quantile([], 0.5)).toBeNaN();
  });
});
