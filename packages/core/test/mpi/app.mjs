// docs/processes.md's app: `mpirun -n 2 node app.mjs` runs ag-gemm over the job's processes, one
// device each; process 0 prints the report. processes-doc.test.ts bundles it (with @syncopate/core
// from source) and runs it under mpirun; from packages/core it runs as it is against the built dist.
// #region app
import { formatRunReport, joinProcessGroup, runWorkload } from '@syncopate/core';

// The job this process is one of (undefined when not started by mpirun or srun).
const processes = await joinProcessGroup({ timeoutMs: 30_000 });
try {
  const report = await runWorkload({
    workload: 'ag-gemm',
    ranks: 4,
    shape: { m: 256, n: 256, k: 256 },
    dtype: 'f32',
    order: 'chunk-arrival',
    backend: 'auto',
    seed: 1,
    // Every device of the job, one a process here: each process opens its own block of them.
    devices: processes?.size ?? 1,
    ...(processes && { processes }),
  });
  // Every process gets the same report: its error and times are over all of them.
  if ((processes?.rank ?? 0) === 0) console.log(formatRunReport(report));
  await processes?.close();
  process.exitCode = report.verified ? 0 : 1;
} catch (e) {
  // A failure this process met alone would leave the others waiting for its chunks: end the job.
  processes?.abort(1, `[process ${processes.rank} on ${processes.host}] ${e}`);
  throw e;
}
// #endregion app
