import { spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { hasWebGPU } from './webgpu.js';
import { bundleRuntime } from './bundle.js';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
// Inside the package, so that the bundle's `import('webgpu')` resolves to the package's dependency.
const outDir = `${packageDir}node_modules/.cache/exit-test`;
const script = fileURLToPath(new URL('fixtures/exit-script.mjs', import.meta.url));

/**
 * A Node process that used Dawn must end by itself once it lets go of the GPU. This runs a script in a
 * child `node` (tests run in vitest's workers, which never exit on their own) against a fresh bundle
 * of src/, and expects exit code 0 well before the 20 s limit.
 */
describe.skipIf(!hasWebGPU)('process exit', () => {
  beforeAll(async () => {
    await bundleRuntime('exit-test');
  }, 60_000);

  function runScript(mode: string) {
    const started = performance.now();
    const child = spawnSync(process.execPath, [script, pathToFileURL(`${outDir}/index.js`).href, mode], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    return { ...child, seconds: (performance.now() - started) / 1000 };
  }

  it.each([
    ['closed', 'ran: timestamp-query, count 1000'],
    ['timed-out', 'ran: GpuTimeoutError'],
    ['left-open', 'ran: timestamp-query, count 1000'],
  ])('exits by itself (%s)', (mode, ran) => {
    const child = runScript(mode);
    expect(child.error, `${child.error} after ${child.seconds.toFixed(1)} s; stderr: ${child.stderr}`).toBeUndefined();
    expect(child.signal).toBeNull();
    expect(child.status, child.stderr).toBe(0);
    expect(child.stdout).toContain(ran);
    expect(child.stdout).toContain('finished');
  }, 30_000);
});
