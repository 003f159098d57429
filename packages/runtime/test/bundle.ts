/** The runtime's sources bundled (webgpu left out) for the tests that run it in a child process. */
import { fileURLToPath } from 'node:url';
import { build } from 'tsup';

const packageDir = fileURLToPath(new URL('..', import.meta.url));

/**
 * Bundles src/ into node_modules/.cache/<name> inside the package (so that the bundle's
 * `import('webgpu')` resolves to its dependency); returns the folder.
 */
export async function bundleRuntime(name: string): Promise<string> {
  const outDir = `${packageDir}node_modules/.cache/${name}`;
  await build({ entry: { index: `${packageDir}src/index.ts` }, outDir, format: ['esm'], external: ['webgpu'], dts: false, sourcemap: false, clean: true, silent: true, config: false });
  return outDir;
}
