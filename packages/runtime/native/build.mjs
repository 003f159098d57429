// Builds the host-copy addon (host_copy.c) with node-gyp. Optional: where it cannot be built (no C
// compiler, no Node headers and no network for them) peer copies run their host copy on the JS thread
// instead (src/host-copy.ts), so a failure here is reported and the build goes on.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

function findNodeGyp() {
  if (process.env.npm_config_node_gyp && existsSync(process.env.npm_config_node_gyp)) return process.env.npm_config_node_gyp;
  try {
    return createRequire(import.meta.url).resolve('node-gyp/bin/node-gyp.js');
  } catch {}
  const bundled = resolve(process.execPath, '../../lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js');
  return existsSync(bundled) ? bundled : undefined;
}

const nodeGyp = findNodeGyp();
// Node's own headers, where this Node was installed with them: no download needed.
const prefix = resolve(process.execPath, '../..');
const nodedir = existsSync(join(prefix, 'include/node/node_api.h')) ? [`--nodedir=${prefix}`] : [];
const result = nodeGyp
  ? spawnSync(process.execPath, [nodeGyp, 'rebuild', ...nodedir], { cwd: here, encoding: 'utf8' })
  : { status: 1, stdout: '', stderr: 'node-gyp not found' };
if (result.status === 0) {
  console.log(`host-copy addon built: ${join(here, 'build/Release/host_copy.node')}`);
} else {
  const last = `${result.stderr ?? ''}${result.error ?? ''}`.trim().split('\n').slice(-3).join(' | ');
  console.warn(`host-copy addon not built (${last}); peer copies will copy on the JS thread`);
  if (process.env.SYNCOPATE_REQUIRE_HOST_COPY_ADDON === '1') process.exit(1);
}
