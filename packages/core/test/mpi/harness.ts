/**
 * What the tests that run under mpirun share (mpi-run.test.ts, processes-doc.test.ts): whether they
 * can run, the MPI addon built, scripts bundled with the packages' sources, and mpirun itself.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'tsup';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const mpiAddon = `${root}packages/runtime/native/mpi/build/Release/mpi_transport.node`;
const hostCopyAddon = `${root}packages/runtime/native/build/Release/host_copy.node`;

export const hasMpirun = spawnSync('mpirun', ['--version'], { encoding: 'utf8' }).status === 0;
/** CI installs Open MPI: there these tests must run, not skip. */
export const runMpi = hasMpirun || !!process.env.CI;

/**
 * The MPI addon (built where missing or older than its source), and `entries` bundled into a folder
 * of the runtime package (so that a bundle's `import('webgpu')` resolves to its dependency), with
 * @syncopate/* taken from the sources. Returns the folder.
 */
export async function bundleForMpi(name: string, entries: Record<string, string>): Promise<string> {
  if (!existsSync(mpiAddon) || statSync(mpiAddon).mtimeMs < statSync(`${root}packages/runtime/native/mpi/mpi_transport.c`).mtimeMs) {
    const built = spawnSync(process.execPath, [`${root}packages/runtime/native/build-mpi.mjs`], { encoding: 'utf8', env: { ...process.env, SYNCOPATE_REQUIRE_MPI_ADDON: '1' } });
    if (built.status !== 0) throw new Error(`native/build-mpi.mjs failed: ${built.stdout}${built.stderr}`);
  }
  const outDir = `${root}packages/runtime/node_modules/.cache/${name}`;
  const packages = ['ir', 'passes', 'backends', 'runtime', 'core'];
  await build({
    entry: Object.fromEntries(Object.entries(entries).map(([key, path]) => [key, `${root}${path}`])),
    outDir,
    format: ['esm'],
    platform: 'node',
    target: 'node20',
    splitting: false,
    noExternal: [/.*/],
    external: ['webgpu'],
    dts: false,
    sourcemap: false,
    clean: true,
    silent: true,
    config: false,
    esbuildOptions(options) {
      options.alias = Object.fromEntries(packages.map((p) => [`@syncopate/${p}`, `${root}packages/${p}/src/index.ts`]));
    },
  });
  return outDir;
}

export interface Job extends SpawnSyncReturns<string> {
  readonly seconds: number;
}

/** `mpirun [args...] node <program...>`, as root too, on 2 cores too, with the addons built here. */
export function mpirun(args: readonly string[], program: readonly string[], timeoutMs = 120_000, env: NodeJS.ProcessEnv = {}): Job {
  const started = performance.now();
  const child = spawnSync('mpirun', ['--allow-run-as-root', '--oversubscribe', ...args, process.execPath, ...program], {
    encoding: 'utf8',
    timeout: timeoutMs,
    env: {
      ...process.env,
      SYNCOPATE_MPI_ADDON: mpiAddon,
      ...(existsSync(hostCopyAddon) && { SYNCOPATE_HOST_COPY_ADDON: hostCopyAddon }),
      XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR ?? '/tmp',
      ...env,
    },
  });
  return { ...child, seconds: (performance.now() - started) / 1000 };
}

/** What a job said, for an assertion's message. */
export const said = (job: Job) => `exit ${job.status} (${job.signal ?? 'no signal'}) after ${job.seconds.toFixed(1)} s\nstdout: ${job.stdout}\nstderr: ${job.stderr}`;
