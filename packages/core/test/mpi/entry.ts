// What the scripts under mpirun use (bundled by mpi-run.test.ts): the package, and the CLI's entry points.
export * from '../../src/index.js';
export { main, parseCommandLine } from '../../src/tools/cli/main.js';
export { runInJob } from '../../src/tools/cli/mpi-job.js';
