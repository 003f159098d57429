import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runWorkload } from '../src/tools/run.js';
import type { ChromeTrace } from '../src/tools/trace.js';
import type { TransferPlan } from '../src/tools/transfer-plan.js';
import { cli } from './cli-harness.js';

// The real runWorkload, watched: a refused --trace must not get as far as running.
vi.mock('../src/tools/run.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../src/tools/run.js')>();
  return { ...actual, runWorkload: vi.fn(actual.runWorkload) };
});

const SMALL = ['--m', '64', '--n', '32', '--k', '32'];

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'syncopate-dump-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const readPlan = (at: string) => JSON.parse(readFileSync(join(at, 'plan.json'), 'utf8')) as TransferPlan;

describe('--dump-wgsl DIR', () => {
  it('compile writes the WGSL that --emit wgsl prints and the plan, creating DIR, and still prints its output', async () => {
    const out = join(dir, 'a', 'b');
    const dumped = await cli('compile', 'ag-gemm', '--ranks', '2', ...SMALL, '--dump-wgsl', out);
    expect(dumped.code).toBe(0);
    expect(dumped.out).toMatch(/^module @ag_gemm ranks\(2\)/);
    expect(dumped.err).toBe(`syncopate: wrote device-0.wgsl, plan.json into ${out}`);
    expect(readdirSync(out).sort()).toEqual(['device-0.wgsl', 'plan.json']);
    const printed = await cli('compile', 'ag-gemm', '--ranks', '2', ...SMALL, '--emit', 'wgsl');
    expect(readFileSync(join(out, 'device-0.wgsl'), 'utf8').trimEnd()).toBe(printed.out);

    const plan = readPlan(out);
    expect(plan.rankDevice).toEqual([0, 0]);
    expect(plan.devices).toHaveLength(1);
    const [device] = plan.devices;
    expect(device!.wgsl).toBe('device-0.wgsl');
    expect(device!.phases).toHaveLength(1);
    // Both chunks stay on the device: they move inside its one dispatch, and nothing crosses.
    expect(plan.chunks.map((c) => [c.name, c.route, c.src, c.dst])).toEqual([
      ['c0', 'gpu-signal', 0, 1],
      ['c1', 'gpu-signal', 1, 0],
    ]);
    expect(device!.phases[0]!.inside).toEqual(['c0', 'c1']);
    expect(plan.chunks.every((c) => c.byteRuns === undefined)).toBe(true);
    expect(device!.phases[0]!.tiles.map((t) => t.rank)).toEqual([0, 1]);
  });

  it('names a place it cannot write, with exit code 2', async () => {
    const file = join(dir, 'taken');
    writeFileSync(file, 'x');
    const inTheWay = await cli('compile', 'ag-gemm', '--ranks', '2', ...SMALL, '--dump-wgsl', file);
    expect(inTheWay.code).toBe(2);
    expect(inTheWay.err).toBe(`syncopate: --dump-wgsl ${file}: cannot write there (a file of that name is in the way)`);
    const under = await cli('compile', 'ag-gemm', '--ranks', '2', ...SMALL, '--dump-wgsl', join(file, 'sub'));
    expect(under.code).toBe(2);
    expect(under.err).toBe(`syncopate: --dump-wgsl ${join(file, 'sub')}: cannot write there (a part of the path is not a directory)`);
  });
});

describe('bad usage of --dump-wgsl and --trace', () => {
  const cases: [string[], string][] = [
    [['compile', 'ag-gemm', '--dump-wgsl='], "--dump-wgsl needs a directory name, got ''"],
    [['run', 'ag-gemm', '--trace='], "--trace needs a file name, got ''"],
    [['compile', 'ag-gemm', '--trace', 't.json'], 'option --trace does not apply to compile'],
    [['compile', 'ag-gemm', '--time', '--dump-wgsl', 'd'], '--time prints timings only; leave out --dump-wgsl'],
  ];
  it.each(cases)('%j', async (argv, message) => {
    const { code, err, out } = await cli(...argv);
    expect(code).toBe(2);
    expect(out).toBe('');
    expect(err).toBe(`syncopate: ${message}`);
  });

  it('run refuses a trace file it could not write before running anything', async () => {
    const file = join(dir, 'no-such-dir', 'trace.json');
    vi.mocked(runWorkload).mockClear();
    const { code, err } = await cli('run', 'ag-gemm', '--ranks', '2', ...SMALL, '--trace', file);
    expect(code).toBe(2);
    expect(err).toBe(`syncopate: --trace ${file}: cannot write there (no such directory)`);
    const isDir = await cli('run', 'ag-gemm', '--ranks', '2', ...SMALL, '--trace', dir);
    expect(isDir.err).toBe(`syncopate: --trace ${dir}: cannot write there (it is a directory)`);
    expect(runWorkload).not.toHaveBeenCalled();
  });
});

describe('run --dump-wgsl DIR --trace FILE on 2 devices', () => {
  it('writes each device\'s WGSL, the plan with the byte runs between devices, and the trace of one run', async () => {
    const out = join(dir, 'kernels');
    const traceFile = join(dir, 'run.trace.json');
    const { code, out: printed, err } = await cli('run', 'ag-gemm', '--ranks', '4', '--devices', '2', ...SMALL, '--dump-wgsl', out, '--trace', traceFile, '--json');
    expect(err.split('\n')).toEqual([
      `syncopate: wrote device-0.wgsl, device-1.wgsl, plan.json into ${out}`,
      `syncopate: wrote the trace of one more run into ${traceFile} (open it in https://ui.perfetto.dev or chrome://tracing)`,
    ]);
    expect(code).toBe(0);
    expect(JSON.parse(printed).verified).toBe(true);

    expect(readFileSync(join(out, 'device-0.wgsl'), 'utf8')).toContain('device 0: ranks 0, 1');
    expect(readFileSync(join(out, 'device-1.wgsl'), 'utf8')).toContain('device 1: ranks 2, 3');
    const plan = readPlan(out);
    expect(plan.rankDevice).toEqual([0, 0, 1, 1]);
    const crossing = plan.chunks.filter((c) => c.fromDevice !== c.toDevice);
    expect(crossing.length).toBeGreaterThan(0);
    for (const c of crossing) {
      expect(c.route).toBe('peer-copy');
      // A 16-row shard of A (32 f32 columns) is one contiguous run of 2 KiB in the source rank's copy.
      expect(c.byteRuns).toEqual([{ offset: (c.src * 64 * 32 + c.region.lo[0]! * 32) * 4, bytes: 16 * 32 * 4 }]);
      expect(c.bytes).toBe(2048);
      // Sent after a phase of its source's device, landed before a later one of its destination's.
      expect(plan.devices[c.fromDevice]!.phases[c.readAfterPhase!]?.sends ?? plan.devices[c.fromDevice]!.sendsAtLaunch).toContain(c.name);
      expect(plan.devices[c.toDevice]!.phases[c.landsBeforePhase!]!.lands).toContain(c.name);
    }
    // Every chunk is in exactly one place: moved inside a dispatch, or landed by the host.
    const inside = plan.devices.flatMap((d) => d.phases.flatMap((p) => p.inside));
    const landed = plan.devices.flatMap((d) => d.phases.flatMap((p) => p.lands));
    expect([...inside, ...landed].sort()).toEqual(plan.chunks.map((c) => c.name).sort());

    const trace = JSON.parse(readFileSync(traceFile, 'utf8')) as ChromeTrace;
    expect(trace.metadata.run?.verified).toBe(true);
    const dispatches = trace.traceEvents.filter((e) => e.cat === 'dispatch');
    // One event per phase per rank, as many phases as the plan says.
    expect(dispatches).toHaveLength(plan.devices.reduce((n, d) => n + d.phases.length * d.ranks.length, 0));
    expect(trace.traceEvents.filter((e) => e.cat === 'peer-copy').map((e) => e.name).sort()).toEqual(crossing.map((c) => `%${c.name}`).sort());
  }, 120_000);
});
