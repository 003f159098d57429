// Builds the host-copy addon (host_copy.c) with node-gyp. Optional: where it cannot be built (no C
// compiler, no Node headers and no network for them) peer copies run their host copy on the JS thread
// instead (src/host-copy.ts), so a failure here is reported and the build goes on.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeGypRebuild } from './node-gyp.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const result = nodeGypRebuild(here);
if (result.status === 0) {
  console.log(`host-copy addon built: ${join(here, 'build/Release/host_copy.node')}`);
} else {
  const last = `${result.stderr ?? ''}${result.error ?? ''}`.trim().split('\n').slice(-3).join(' | ');
  console.warn(`host-copy addon not built (${last}); peer copies will copy on the JS thread`);
  if (process.env.SYNCOPATE_REQUIRE_HOST_COPY_ADDON === '1') process.exit(1);
}
