/**
 * docs/processes.md's app: the page shows test/mpi/app.mjs's code, and the app runs under mpirun on
 * lavapipe (bundled with the packages' sources, as mpi-run.test.ts bundles its scripts), one report
 * from process 0, verified, chunks between the processes by mpi.
 */
import { describe, expect, it } from 'vitest';
import { docCodeBlock, readRepoFile, region } from './doc-sync.js';
import { bundleForMpi, mpirun, runMpi, said } from './mpi/harness.js';

describe('docs/processes.md', () => {
  it("shows test/mpi/app.mjs's code", () => {
    expect(docCodeBlock(readRepoFile('docs/processes.md'), 'packages/core/test/mpi/app.mjs', 'app')).toBe(region(readRepoFile('packages/core/test/mpi/app.mjs'), 'app'));
  });

  it.skipIf(!runMpi)('runs its app under mpirun -n 2: one report, from process 0, verified, chunks between the processes by mpi', async () => {
    const outDir = await bundleForMpi('processes-doc', { app: 'packages/core/test/mpi/app.mjs' });
    const job = mpirun(['-n', '2'], [`${outDir}/app.js`]);
    expect(job.status, said(job)).toBe(0);
    expect(job.stdout.match(/^workload/gm)?.length, said(job)).toBe(1);
    expect(job.stdout).toMatch(/^processes\s+2 on 1 host$/m);
    expect(job.stdout).toMatch(/^backend\s+gpu-signal\+mpi$/m);
    expect(job.stdout).toMatch(/^verified\s+yes$/m);
  }, 180_000);
});
