/**
 * Ranks as processes, end to end on lavapipe: `mpirun` starts the processes, each opens its block of
 * the devices and runs its ranks of the same plan; chunks between processes go by mpi. Every
 * workload split over 2 and 3 processes and verified, once over TCP alone; the CLI's output from
 * process 0 alone; bad input refused before any kernel runs; a chunk that never arrives and a
 * process killed mid-run end every process with a typed error, none left behind.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { bundleForMpi, hasMpirun, mpirun as mpirunWith, runMpi, said, type Job } from './mpi/harness.js';

let outDir = '';
const bundle = () => pathToFileURL(`${outDir}/entry.js`).href;
const cli = () => `${outDir}/cli.js`;
const script = (name: string) => fileURLToPath(new URL(`mpi/${name}`, import.meta.url));
if (!runMpi) console.warn('skipping the runs over MPI processes: no mpirun on PATH (install openmpi-bin and libopenmpi-dev)');

/** `mpirun -n <processes> [mca...] node <program> [args...]`. */
function mpirun(processes: number, program: readonly string[], mca: readonly string[] = [], timeoutMs = 120_000, env: NodeJS.ProcessEnv = {}): Job {
  return mpirunWith(['-n', String(processes), ...mca], program, timeoutMs, env);
}

interface Report {
  readonly workload: string;
  readonly verified: boolean;
  readonly backend: string;
  readonly processes?: { readonly count: number; readonly sameHostCopy?: string; readonly layout: readonly { readonly devices: readonly { readonly ranks: readonly number[] }[] }[] };
}

/** Each command line run by every process of one job (workloads.mjs); process 0's reports, in order. */
function runAll(processes: number, commands: readonly (readonly string[])[], mca: readonly string[] = [], env: NodeJS.ProcessEnv = {}): { job: Job; reports: { code: number; report: Report }[] } {
  const job = mpirun(processes, [script('workloads.mjs'), bundle(), JSON.stringify(commands)], mca, 120_000, env);
  // Dawn may print a warning without a newline before a report: match the report wherever the line starts.
  const reports = [...job.stdout.matchAll(/report (\d+) (.*)$/gm)].map(([, code, json]) => ({ code: Number(code), report: JSON.parse(json!) as Report }));
  return { job, reports };
}

/** Every command verified, chunks between processes by mpi, and its ranks spread over every process. */
function expectVerifiedOver(processes: number, commands: readonly (readonly string[])[], mca: readonly string[] = [], env: NodeJS.ProcessEnv = {}) {
  const { job, reports } = runAll(processes, commands, mca, env);
  expect(job.status, said(job)).toBe(0);
  expect(reports.length, said(job)).toBe(commands.length);
  reports.forEach(({ code, report }, i) => {
    const what = `${commands[i]!.join(' ')}\n${said(job)}`;
    expect(code, what).toBe(0);
    expect(report.verified, what).toBe(true);
    expect(report.backend.split('+'), what).toContain('mpi');
    expect(report.processes?.count, what).toBe(processes);
    // The single copy where the processes may read each other (the probe at join), MPI's path otherwise, with its reason.
    expect(report.processes?.sameHostCopy, what).toMatch(env.SYNCOPATE_MPI_SINGLE_COPY === '0' ? /^mpi \(SYNCOPATE_MPI_SINGLE_COPY=0/ : /^(cma \(process_vm_readv, \d+ copy threads\)|mpi \(.+\))$/);
    for (const p of report.processes!.layout) expect(p.devices.flatMap((d) => d.ranks).length, what).toBeGreaterThan(0);
  });
}

const every = (ranks: number, extra: readonly string[] = []) =>
  ['ag-gemm', 'gemm-rs', 'gemv-ar', 'a2a-gemm', 'embed-a2a', 'ring-attn'].map((w) => ['run', w, '--ranks', String(ranks), ...extra]);

describe.skipIf(!runMpi)('ranks as processes (mpirun on lavapipe)', () => {
  beforeAll(async () => {
    outDir = await bundleForMpi('mpi-run', { entry: 'packages/core/test/mpi/entry.ts', cli: 'packages/core/src/tools/cli.ts' });
  }, 120_000);

  it('mpirun is on PATH (CI must run these tests)', () => {
    expect(hasMpirun).toBe(true);
  });

  it('runs every workload over 2 processes, a device each, and over 2 devices each (mpi and peer-copy), verified', () => {
    expectVerifiedOver(2, [...every(4), ['run', 'ag-gemm', '--ranks', '4', '--devices', '4'], ['run', 'a2a-gemm', '--ranks', '4', '--dtype', 'f16', '--m', '41', '--n', '78', '--k', '32']]);
  }, 240_000);

  it('runs every workload over 3 processes, verified', () => {
    expectVerifiedOver(3, every(3).map((argv) => [...argv, ...(argv[1] === 'embed-a2a' ? ['--m', '96'] : argv[1] === 'ring-attn' ? ['--m', '192'] : [])]));
  }, 240_000);

  it('runs over TCP alone (pml ob1, btl tcp,self: the path between machines; no single copy, which would carry the bytes on one host), verified', () => {
    expectVerifiedOver(2, [every(2)[0]!, every(2)[1]!], ['--mca', 'pml', 'ob1', '--mca', 'btl', 'tcp,self'], { SYNCOPATE_MPI_SINGLE_COPY: '0' });
  }, 120_000);

  it.each([2, 4])('runs the run API over 2 processes, %i devices in all: each gives its own ranks, reads its own, verified', (devices) => {
    const job = mpirun(2, [script('run-api.mjs'), bundle(), String(devices)]);
    expect(job.status, said(job)).toBe(0);
    const lines = [...job.stdout.matchAll(/^ok (\d) (\S+) (\S+) (\S*)$/gm)];
    expect(lines.map((l) => [l[1], l[2]]).sort(), said(job)).toEqual([
      ['0', '0,1'],
      ['1', '2,3'],
    ]);
    for (const l of lines) {
      expect(Number(l[3]), said(job)).toBe(0);
      expect(l[4], 'read() of ranks in other processes').toBe('TensorInputError');
    }
  }, 120_000);

  it('benches over 2 processes: every variant verified, the report from process 0 alone', () => {
    const job = mpirun(2, [cli(), 'bench', 'ag-gemm', '--ranks', '2', '--m', '64', '--n', '32', '--k', '32', '--runs', '3', '--warmup', '1', '--json']);
    expect(job.status, said(job)).toBe(0);
    const report = JSON.parse(job.stdout) as { reports: { devices: number; variants: Record<string, { verified: boolean; backend: string }> }[] };
    const row = report.reports[0]!;
    expect(row.devices).toBe(2);
    for (const v of Object.values(row.variants)) expect(v.verified).toBe(true);
    expect(row.variants.fused!.backend).toBe('mpi');
  }, 120_000);

  it('prints one report, from process 0, with the layout of processes, hosts, devices and ranks', () => {
    const job = mpirun(2, [cli(), 'run', 'gemm-rs', '--ranks', '4']);
    expect(job.status, said(job)).toBe(0);
    expect(job.stdout.match(/^workload/gm)?.length, said(job)).toBe(1);
    expect(job.stdout).toMatch(/^processes\s+2 on 1 host$/m);
    expect(job.stdout).toMatch(/^ {2}process 0\s+\S+: device 0 \(.*\) ranks 0-1$/m);
    expect(job.stdout).toMatch(/^ {2}process 1\s+\S+: device 1 \(.*\) ranks 2-3$/m);
    expect(job.stdout).toMatch(/^verified\s+yes$/m);
  }, 120_000);

  it('refuses ranks that do not divide over the processes before any kernel runs, in every process', () => {
    const job = mpirun(2, [cli(), 'run', 'ag-gemm', '--ranks', '3']);
    expect(job.status, said(job)).toBe(2);
    expect(job.stderr).toContain('syncopate: 3 ranks do not divide over 2 processes: give --ranks a multiple of 2');
    expect(job.stderr).toContain('[process 1 on ');
    expect(job.stdout).toBe('');
  }, 60_000);

  it('refuses, before any device opens, what cannot run over processes yet: tune (tune tp-layer too), --trace', () => {
    for (const argv of [['tune', 'ag-gemm', '--ranks', '2'], ['tune', 'tp-layer', '--ranks', '2'], ['run', 'ag-gemm', '--ranks', '2', '--trace', '/tmp/t.json']]) {
      const job = mpirun(2, [cli(), ...argv]);
      expect(job.status, said(job)).toBe(2);
      expect(job.stderr, said(job)).toMatch(/syncopate: .*(over several processes|traced yet)/);
    }
  }, 120_000);

  // A layer of 16 rows, 2 ranks: a few seconds a process on lavapipe.
  const layerShape = ['--seq', '16', '--hidden', '32', '--heads', '4', '--head-dim', '8', '--ffn', '64', '--ranks', '2'];

  it('runs tp-layer over 2 processes, a device each: verified against the CPU over every rank, one report from process 0 with the layout', () => {
    const job = mpirun(2, [cli(), 'run', 'tp-layer', ...layerShape, '--runs', '2']);
    expect(job.status, said(job)).toBe(0);
    expect(job.stdout.match(/^layer/gm)?.length, said(job)).toBe(1);
    expect(job.stdout, said(job)).toMatch(/^shape\s+S=16 H=32 \(4 heads of 8\) F=64, f32, 2 ranks on 2 devices /m);
    expect(job.stdout).toMatch(/^processes\s+2 on 1 host$/m);
    expect(job.stdout).toMatch(/^ {2}process 0\s+\S+: device 0 \(.*\) ranks 0$/m);
    expect(job.stdout).toMatch(/^ {2}process 1\s+\S+: device 1 \(.*\) ranks 1$/m);
    expect(job.stdout).toMatch(/^check\s+verified against the CPU reference: max error /m);
    expect(job.stdout).toMatch(/^time\s+.*2 runs\), host clock around the ten steps, each run its slowest process$/m);
  }, 180_000);

  it('benches tp-layer over 2 processes: fused and sequential checked against each other and the CPU, one JSON report from process 0', () => {
    const job = mpirun(2, [cli(), 'bench', 'tp-layer', ...layerShape, '--runs', '1', '--warmup', '0', '--json']);
    expect(job.status, said(job)).toBe(0);
    const report = JSON.parse(job.stdout) as {
      devices: number;
      verified: boolean;
      rounds: number;
      check: { fusedVsSequential: { verified: boolean }; vsReference: { fused: { verified: boolean }; sequential: { verified: boolean } } };
      stepsMedianMs: { fused: Record<string, number> };
      processes: { count: number; layout: { process: number; devices: { device: number; ranks: number[] }[] }[] };
    };
    expect(report).toMatchObject({ devices: 2, verified: true, rounds: 1 });
    expect(report.check.fusedVsSequential.verified).toBe(true);
    expect(report.check.vsReference.fused.verified).toBe(true);
    expect(report.check.vsReference.sequential.verified).toBe(true);
    expect(Object.keys(report.stepsMedianMs.fused)).toContain('all-gather+qkv');
    expect(report.processes.count).toBe(2);
    expect(report.processes.layout.map((p) => p.devices.map((d) => [d.device, d.ranks]))).toEqual([[[0, [0]]], [[1, [1]]]]);
  }, 180_000);

  it('refuses a job of another size than --processes says, in every process', () => {
    const job = mpirun(2, [cli(), 'run', 'ag-gemm', '--ranks', '2', '--processes', '3']);
    expect(job.status, said(job)).toBe(2);
    expect(job.stderr).toContain('syncopate: --processes 3, but mpirun started 2: give mpirun -n 3');
    expect(job.stdout).toBe('');
  }, 60_000);

  it('refuses a plan that differs between the processes (PlanMismatchError in each) before any kernel runs', () => {
    // Two programs in one job (MPMD): process 0 and process 1 given different shapes.
    const run = (m: string) => [cli(), 'run', 'ag-gemm', '--ranks', '2', '--m', m];
    const job = mpirunWith(['-n', '1', process.execPath, ...run('64'), ':', '-n', '1'], run('128'), 60_000);
    expect(job.status, said(job)).toBe(2);
    expect(job.stderr).toMatch(/syncopate: the processes did not all build the same placed plan: process 0 has [0-9a-f]{16}, process 1 [0-9a-f]{16}/);
    expect(job.stderr).toMatch(/\[process 1 on \S+\] syncopate: the processes did not all build the same placed plan/);
    expect(job.stdout).toBe('');
  }, 60_000);

  it('ends every process with a typed error naming the chunk, ranks and hosts when a chunk never arrives', () => {
    const job = mpirun(2, [script('stall.mjs'), bundle(), '2000'], [], 60_000);
    expect(job.seconds, said(job)).toBeLessThan(45);
    expect(job.status, said(job)).not.toBe(0);
    const line = job.stdout.split('\n').find((l) => l.startsWith('error 0 '));
    expect(line, said(job)).toBeDefined();
    const error = JSON.parse(line!.slice('error 0 '.length)) as { name: string; message: string; cause: string };
    expect(error.name).toBe('PeerCopyError');
    expect(error.cause).toBe('ProcessTimeoutError');
    expect(error.message).toMatch(/chunk \d+ %\S+ \(rank 1 -> rank 0\)/);
    expect(error.message).toMatch(/process 0 \(host \S+\) waited 2000 ms for "of chunk \d+ %\S+ \(rank 1 -> rank 0\)" from process 1 \(host \S+\)/);
    expect(job.stdout).not.toMatch(/finished/);
  }, 60_000);

  it('ends the job when a process is killed mid-run: the other says what was in flight, and no process is left', async () => {
    const job = mpirun(2, [script('kill.mjs'), bundle(), '3000'], [], 60_000);
    expect(job.error, said(job)).toBeUndefined();
    expect(job.seconds, said(job)).toBeLessThan(40);
    expect(job.status, said(job)).not.toBe(0);
    expect(job.stderr).toMatch(/ProcessLostError: process 0 \(host \S+\) lost "[^"]+"/);
    const pids = [...job.stdout.matchAll(/^pid \d (\d+)$/gm)].map((m) => Number(m[1]));
    expect(pids.length, said(job)).toBe(2);
    for (const pid of pids) expect(running(pid), `process ${pid} still runs`).toBe(false);
  }, 60_000);
});

/** Whether `pid` runs: no /proc entry once reaped; a zombie (exited, not yet reaped) runs no more. */
function running(pid: number): boolean {
  try {
    const state = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}
