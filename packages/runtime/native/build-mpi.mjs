// Builds the MPI transport addon (mpi/mpi_transport.c) with node-gyp, against the Open MPI that
// `mpicc` wraps (libmpi.so.40, Open MPI 4.x). Optional: without `mpicc` on PATH (no MPI installed) a
// process started by mpirun cannot join its job (src/mpi/process-group.ts says so when it tries), and
// everything else runs as before, so a missing MPI is reported and the build goes on. Set
// SYNCOPATE_REQUIRE_MPI_ADDON=1 to make any failure here fail the build (CI does).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = join(dirname(fileURLToPath(import.meta.url)), 'mpi');
const required = process.env.SYNCOPATE_REQUIRE_MPI_ADDON === '1';

function giveUp(why) {
  console.warn(`mpi transport addon not built (${why}); processes started by mpirun cannot join their job`);
  process.exit(required ? 1 : 0);
}

function findNodeGyp() {
  if (process.env.npm_config_node_gyp && existsSync(process.env.npm_config_node_gyp)) return process.env.npm_config_node_gyp;
  try {
    return createRequire(import.meta.url).resolve('node-gyp/bin/node-gyp.js');
  } catch {}
  const bundled = resolve(process.execPath, '../../lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js');
  return existsSync(bundled) ? bundled : undefined;
}

const mpicc = spawnSync('mpicc', ['--showme:version'], { encoding: 'utf8' });
if (mpicc.error || mpicc.status !== 0) giveUp(`no mpicc on PATH: install Open MPI 4 (on Debian/Ubuntu: apt-get install libopenmpi-dev openmpi-bin)`);
const nodeGyp = findNodeGyp();
if (!nodeGyp) giveUp('node-gyp not found');
// Node's own headers, where this Node was installed with them: no download needed.
const prefix = resolve(process.execPath, '../..');
const nodedir = !process.env.npm_config_nodedir && existsSync(join(prefix, 'include/node/node_api.h')) ? [`--nodedir=${prefix}`] : [];
const result = spawnSync(process.execPath, [nodeGyp, 'rebuild', ...nodedir], { cwd: here, encoding: 'utf8' });
if (result.status !== 0) giveUp(`${result.stderr ?? ''}${result.error ?? ''}`.trim().split('\n').slice(-3).join(' | '));
console.log(`mpi transport addon built: ${join(here, 'build/Release/mpi_transport.node')}`);
