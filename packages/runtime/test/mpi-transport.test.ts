import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { launchedByMpi, ProcessGroupError, ProcessLostError, ProcessTimeoutError, RuntimeError } from '../src/index.js';
import { hasWebGPU } from './webgpu.js';
import { bundleRuntime } from './bundle.js';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
// Inside the package, so that the bundle's `import('webgpu')` resolves to the package's dependency.
const outDir = `${packageDir}node_modules/.cache/mpi-test`;
const bundleUrl = pathToFileURL(`${outDir}/index.js`).href;
const addonPath = `${packageDir}native/mpi/build/Release/mpi_transport.node`;
const addonSource = `${packageDir}native/mpi/mpi_transport.c`;
const script = (name: string) => fileURLToPath(new URL(`mpi/${name}`, import.meta.url));

const hasMpirun = spawnSync('mpirun', ['--version'], { encoding: 'utf8' }).status === 0;
// CI installs Open MPI: there these tests must run, not skip.
const runMpi = hasMpirun || !!process.env.CI;
if (!runMpi) console.warn('skipping MPI transport tests: no mpirun on PATH (install openmpi-bin and libopenmpi-dev)');

interface Job extends SpawnSyncReturns<string> {
  readonly seconds: number;
}

/** `mpirun -n <processes> [mca...] node <script> <bundle> [args...]`, as root too, on 2 cores too. */
function mpirun(processes: number, name: string, args: readonly string[] = [], mca: readonly string[] = [], timeoutMs = 30_000, env: NodeJS.ProcessEnv = {}): Job {
  const started = performance.now();
  const child = spawnSync('mpirun', ['--allow-run-as-root', '--oversubscribe', '-n', String(processes), ...mca, process.execPath, script(name), bundleUrl, ...args], {
    encoding: 'utf8',
    timeout: timeoutMs,
    env: { ...process.env, SYNCOPATE_MPI_ADDON: addonPath, XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR ?? '/tmp', ...env },
  });
  return { ...child, seconds: (performance.now() - started) / 1000 };
}

/**
 * Whether process `pid` runs: it has no /proc entry once reaped, and a zombie (exited, its parent
 * gone: mpirun may exit before it reaps every child, and a container's init may never reap) runs no
 * more. Waits up to `ms` for it to end.
 */
async function runsAfter(pid: number, ms: number): Promise<boolean> {
  const ends = performance.now() + ms;
  for (;;) {
    let state: string | undefined;
    try {
      state = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0];
    } catch {
      return false;
    }
    if (state === 'Z' || state === 'X') return false;
    if (performance.now() > ends) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** What a failed job said, for an assertion's message. */
const said = (job: Job) => `exit ${job.status} (${job.signal ?? 'no signal'}) after ${job.seconds.toFixed(1)} s\nstdout: ${job.stdout}\nstderr: ${job.stderr}`;

function expectOk(job: Job, processes: number, what: RegExp) {
  expect(job.error, said(job)).toBeUndefined();
  expect(job.status, said(job)).toBe(0);
  for (let rank = 0; rank < processes; rank++) expect(job.stdout, said(job)).toMatch(new RegExp(`^ok ${rank} ${what.source}`, 'm'));
}

describe('launchedByMpi', () => {
  it('tells a process mpirun started by its environment alone', () => {
    expect(launchedByMpi({})).toBe(false);
    expect(launchedByMpi({ OMPI_COMM_WORLD_SIZE: '2' })).toBe(true);
    expect(launchedByMpi({ PMIX_RANK: '0' })).toBe(true);
    expect(launchedByMpi({ PMI_SIZE: '4' })).toBe(true);
  });
});

describe('process errors', () => {
  it('name the operation, both processes and their hosts, in fields and message', () => {
    const op = { kind: 'receive', label: 'chunk 3 %c3 (rank 2 -> rank 0)', peer: 0, peerHost: 'b', process: 1, host: 'a' } as const;
    const timeout = new ProcessTimeoutError(op, 30_000);
    expect(timeout).toBeInstanceOf(RuntimeError);
    expect(timeout.message).toBe('process 1 (host a) waited 30000 ms for "chunk 3 %c3 (rank 2 -> rank 0)" from process 0 (host b)');
    expect({ label: timeout.label, peer: timeout.peer, peerHost: timeout.peerHost, process: timeout.process, host: timeout.host, ms: timeout.ms }).toEqual({
      label: op.label,
      peer: 0,
      peerHost: 'b',
      process: 1,
      host: 'a',
      ms: 30_000,
    });
    expect(new ProcessTimeoutError({ ...op, kind: 'send' }, 5).message).toBe('process 1 (host a) waited 5 ms to send "chunk 3 %c3 (rank 2 -> rank 0)" to process 0 (host b)');
    expect(new ProcessTimeoutError({ kind: 'barrier', label: 'barrier', process: 1, host: 'a' }, 5).message).toBe('process 1 (host a) waited 5 ms for "barrier" from every process');
    expect(new ProcessLostError(op).message).toMatch(/^process 1 \(host a\) lost "chunk 3 %c3 \(rank 2 -> rank 0\)" from process 0 \(host b\): the job is ending/);
  });
});

describe.skipIf(!runMpi)('mpi transport', () => {
  beforeAll(async () => {
    if (!existsSync(addonPath) || statSync(addonPath).mtimeMs < statSync(addonSource).mtimeMs) {
      const built = spawnSync(process.execPath, [`${packageDir}native/build-mpi.mjs`], { encoding: 'utf8', env: { ...process.env, SYNCOPATE_REQUIRE_MPI_ADDON: '1' } });
      if (built.status !== 0) throw new Error(`native/build-mpi.mjs failed: ${built.stdout}${built.stderr}`);
    }
    await bundleRuntime('mpi-test');
  }, 60_000);

  it('mpirun is on PATH (CI must run these tests)', () => {
    expect(hasMpirun).toBe(true);
  });

  // Single copy (process_vm_readv) between processes on one host, as the probe at join chose here
  // (root, no seccomp filter, no Yama), and MPI's own path as SYNCOPATE_MPI_SINGLE_COPY=0 forces it.
  const paths = [
    ['single copy', { EXPECT_COPY: 'cma' }],
    ["MPI's own path", { SYNCOPATE_MPI_SINGLE_COPY: '0', EXPECT_COPY: 'mpi' }],
  ] as const;

  it.each(paths)('rings messages of 0 B to 64 MiB + 13 between 2 processes, gathers, and refuses bad calls before posting (%s)', (_, env) => {
    expectOk(mpirun(2, 'ring.mjs', ['big'], [], 30_000, env), 2, new RegExp(`of 2 .*same-host copy ${env.EXPECT_COPY}`));
  }, 40_000);

  it.each(paths)('rings messages between 3 processes (%s)', (_, env) => {
    expectOk(mpirun(3, 'ring.mjs', ['big'], [], 30_000, env), 3, new RegExp(`of 3 .*same-host copy ${env.EXPECT_COPY}`));
  }, 40_000);

  it('says why it took MPI\'s path when SYNCOPATE_MPI_SINGLE_COPY=0, and the single copy\'s threads otherwise', () => {
    const forced = mpirun(2, 'ring.mjs', [], [], 30_000, { SYNCOPATE_MPI_SINGLE_COPY: '0' });
    expect(forced.stdout, said(forced)).toMatch(/^ok 0 .*same-host copy mpi \(SYNCOPATE_MPI_SINGLE_COPY=0 in process 0\)$/m);
    const threads = mpirun(2, 'ring.mjs', [], [], 30_000, { SYNCOPATE_MPI_COPY_THREADS: '3', EXPECT_COPY: 'cma' });
    expect(threads.stdout, said(threads)).toMatch(/^ok 0 .*same-host copy cma \(process_vm_readv, 3 copy threads\)$/m);
  }, 40_000);

  it('rings messages over TCP (pml ob1, btl tcp,self: the path between machines; no single copy, which would carry the bytes on one host)', () => {
    expectOk(mpirun(2, 'ring.mjs', ['big'], ['--mca', 'pml', 'ob1', '--mca', 'btl', 'tcp,self'], 30_000, { SYNCOPATE_MPI_SINGLE_COPY: '0' }), 2, /of 2/);
  }, 40_000);

  it.runIf(hasWebGPU).each(paths)('sends from a mapped GPU read-back range into a mapped GPU upload range (%s)', (_, env) => {
    expectOk(mpirun(2, 'gpu.mjs', [], [], 30_000, env), 2, new RegExp(`gpu, same-host copy ${env.EXPECT_COPY}`));
  }, 40_000);

  it.each(paths)('times out a receive that never gets its message (cancelled first), and the job then ends normally (%s)', (_, env) => {
    const job = mpirun(2, 'timeout.mjs', ['1500'], [], 30_000, env);
    expect(job.status, said(job)).toBe(0);
    const error = JSON.parse(job.stdout.split('\n').find((line) => line.startsWith('{'))!);
    expect(error).toMatchObject({ label: 'chunk 3 %c3 (rank 2 -> rank 0)', peer: 1, process: 0, ms: 1500 });
    expect(error.host).toBeTruthy();
    expect(error.peerHost).toBe(error.host);
    expect(error.message).toBe(`process 0 (host ${error.host}) waited 1500 ms for "chunk 3 %c3 (rank 2 -> rank 0)" from process 1 (host ${error.host})`);
    expect(error.elapsedMs).toBeGreaterThanOrEqual(1500);
    expect(error.elapsedMs).toBeLessThan(1500 + 2000);
  }, 40_000);

  it.each([
    ['is killed (SIGKILL)', 'kill', /exited on signal 9/, {}],
    ['calls abort(3, message)', 'abort', /process 1 gives up \(kill.mjs abort\)/, {}],
    ["is killed (SIGKILL), on MPI's own path", 'kill', /exited on signal 9/, { SYNCOPATE_MPI_SINGLE_COPY: '0' }],
  ])('when a process %s, the others report what was in flight and the whole job ends', async (_, mode, said1, env) => {
    const job = mpirun(2, 'kill.mjs', [mode], [], 25_000, env);
    expect(job.error, said(job)).toBeUndefined();
    expect(job.seconds, said(job)).toBeLessThan(20);
    expect(job.status, said(job)).not.toBe(0);
    expect(job.stdout, said(job)).not.toContain('received');
    expect(job.stderr, said(job)).toMatch(said1);
    expect(job.stderr, said(job)).toMatch(/ProcessLostError: process 0 \(host .+\) lost "chunk 3 \(rank 1 -> rank 0\)" from process 1 \(host .+\)/);
    const pids = [...job.stdout.matchAll(/^pid \d+ (\d+)$/gm)].map((m) => Number(m[1]));
    expect(pids, said(job)).toHaveLength(2);
    for (const pid of pids) expect(await runsAfter(pid, 2000), `process ${pid} still runs`).toBe(false);
  }, 40_000);

  it('says what to build when started by mpirun without the addon', () => {
    const child = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', `const r = await import(${JSON.stringify(bundleUrl)}); try { await r.joinProcessGroup(); } catch (e) { console.log(e.name + ': ' + e.message); }`],
      { encoding: 'utf8', timeout: 20_000, env: { ...process.env, OMPI_COMM_WORLD_SIZE: '1', SYNCOPATE_MPI_ADDON: '/nonexistent/mpi_transport.node' } },
    );
    expect(child.stdout, child.stderr).toMatch(new RegExp(`^${ProcessGroupError.name}: .*OMPI_COMM_WORLD_SIZE=1.*build-mpi\\.mjs`));
  });

  it('is not joined outside mpirun', () => {
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', `const r = await import(${JSON.stringify(bundleUrl)}); console.log(String(await r.joinProcessGroup()));`], {
      encoding: 'utf8',
      timeout: 20_000,
      env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(OMPI_|PMIX_|PMI_)/.test(k))),
    });
    expect(child.stdout.trim(), child.stderr).toBe('undefined');
  });
});
