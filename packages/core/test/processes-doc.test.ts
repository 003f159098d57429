/**
 * docs/processes.md's app: the page shows test/mpi/app.mjs's code, and the app runs under mpirun on
 * lavapipe (bundled with the packages' sources, as mpi-run.test.ts bundles its scripts), one report
 * from process 0, verified, chunks between the processes by mpi.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'tsup';
import { describe, expect, it } from 'vitest';
import { docCodeBlock, readRepoFile, region } from './doc-sync.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
// Under the runtime package, so that the bundle's `import('webgpu')` resolves to its dependency.
const outDir = `${root}packages/runtime/node_modules/.cache/processes-doc`;
const mpiAddon = `${root}packages/runtime/native/mpi/build/Release/mpi_transport.node`;
const hasMpirun = spawnSync('mpirun', ['--version'], { encoding: 'utf8' }).status === 0;
// CI installs Open MPI: there the app must run, not skip.
const runMpi = hasMpirun || !!process.env.CI;

describe('docs/processes.md', () => {
  it("shows test/mpi/app.mjs's code", () => {
    expect(docCodeBlock(readRepoFile('docs/processes.md'), 'packages/core/test/mpi/app.mjs', 'app')).toBe(region(readRepoFile('packages/core/test/mpi/app.mjs'), 'app'));
  });

  it.skipIf(!runMpi)('runs its app under mpirun -n 2: one report, from process 0, verified, chunks between the processes by mpi', async () => {
    if (!existsSync(mpiAddon) || statSync(mpiAddon).mtimeMs < statSync(`${root}packages/runtime/native/mpi/mpi_transport.c`).mtimeMs) {
      const built = spawnSync(process.execPath, [`${root}packages/runtime/native/build-mpi.mjs`], { encoding: 'utf8', env: { ...process.env, SYNCOPATE_REQUIRE_MPI_ADDON: '1' } });
      if (built.status !== 0) throw new Error(`native/build-mpi.mjs failed: ${built.stdout}${built.stderr}`);
    }
    const packages = ['ir', 'passes', 'backends', 'runtime', 'core'];
    await build({
      entry: { app: `${root}packages/core/test/mpi/app.mjs` },
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
    const job = spawnSync('mpirun', ['--allow-run-as-root', '--oversubscribe', '-n', '2', process.execPath, `${outDir}/app.js`], {
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, SYNCOPATE_MPI_ADDON: mpiAddon, XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR ?? '/tmp' },
    });
    const said = `exit ${job.status} (${job.signal ?? 'no signal'})\nstdout: ${job.stdout}\nstderr: ${job.stderr}`;
    expect(job.status, said).toBe(0);
    expect(job.stdout.match(/^workload/gm)?.length, said).toBe(1);
    expect(job.stdout).toMatch(/^processes\s+2 on 1 host$/m);
    expect(job.stdout).toMatch(/^backend\s+gpu-signal\+mpi$/m);
    expect(job.stdout).toMatch(/^verified\s+yes$/m);
  }, 180_000);
});
