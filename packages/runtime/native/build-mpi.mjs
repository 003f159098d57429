// Builds the MPI transport addon (mpi/mpi_transport.c) with node-gyp, against the Open MPI that
// `mpicc` wraps (libmpi.so.40, Open MPI 4.x). Optional: without `mpicc` on PATH (no MPI installed) a
// process started by mpirun cannot join its job (src/mpi/process-group.ts says so when it tries), and
// everything else runs as before, so a missing MPI is reported and the build goes on. Set
// SYNCOPATE_REQUIRE_MPI_ADDON=1 to make any failure here fail the build (CI does).
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeGypRebuild } from './node-gyp.mjs';

const here = join(dirname(fileURLToPath(import.meta.url)), 'mpi');
const required = process.env.SYNCOPATE_REQUIRE_MPI_ADDON === '1';

function giveUp(why) {
  console.warn(`mpi transport addon not built (${why}); processes started by mpirun cannot join their job`);
  process.exit(required ? 1 : 0);
}

const mpicc = spawnSync('mpicc', ['--showme:version'], { encoding: 'utf8' });
if (mpicc.error || mpicc.status !== 0) giveUp(`no mpicc on PATH: install Open MPI 4 (on Debian/Ubuntu: apt-get install libopenmpi-dev openmpi-bin)`);
const result = nodeGypRebuild(here);
if (result.status !== 0) giveUp(`${result.stderr ?? ''}${result.error ?? ''}`.trim().split('\n').slice(-3).join(' | '));
console.log(`mpi transport addon built: ${join(here, 'build/Release/mpi_transport.node')}`);
