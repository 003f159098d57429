// node-gyp, found as npm has it, run on a binding.gyp: shared by build.mjs and build-mpi.mjs.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

function findNodeGyp() {
  if (process.env.npm_config_node_gyp && existsSync(process.env.npm_config_node_gyp)) return process.env.npm_config_node_gyp;
  try {
    return createRequire(import.meta.url).resolve('node-gyp/bin/node-gyp.js');
  } catch {}
  const bundled = resolve(process.execPath, '../../lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js');
  return existsSync(bundled) ? bundled : undefined;
}

/**
 * `node-gyp rebuild` in `dir`, with Node's own headers where this Node was installed with them (no
 * download needed; they win over npm_config_nodedir); `{ status: 1, stderr }` where node-gyp is missing.
 */
export function nodeGypRebuild(dir) {
  const nodeGyp = findNodeGyp();
  if (!nodeGyp) return { status: 1, stdout: '', stderr: 'node-gyp not found' };
  const prefix = resolve(process.execPath, '../..');
  const nodedir = existsSync(join(prefix, 'include/node/node_api.h')) ? [`--nodedir=${prefix}`] : [];
  return spawnSync(process.execPath, [nodeGyp, 'rebuild', ...nodedir], { cwd: dir, encoding: 'utf8' });
}
