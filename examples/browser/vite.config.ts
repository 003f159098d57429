/**
 * Vite config of the browser example. `@syncopate/*` resolve to the workspace packages' built files
 * (through each package's `exports` map, as an npm install would give them: run `pnpm build` first);
 * in an app of your own that installs `@syncopate/core`, no alias is needed.
 *
 * The build fails if anything in the bundle asks for a Node built-in (`node:fs`, `fs`, ...) or for
 * Dawn (`webgpu`): the packages must bundle for the browser as they are.
 */
import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));
const packages = fileURLToPath(new URL('../../packages/', import.meta.url));

const nodeOnly = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`), 'webgpu']);

function browserOnly(): Plugin {
  return {
    name: 'syncopate:browser-only',
    enforce: 'pre',
    resolveId(id, importer) {
      if (nodeOnly.has(id) || id.startsWith('node:')) {
        this.error(`'${id}' (a Node-only module) is imported by ${importer ?? 'the entry'}: it would reach the browser bundle`);
      }
      return null;
    },
  };
}

export default defineConfig({
  root: here,
  base: './',
  plugins: [browserOnly()],
  resolve: {
    alias: [{ find: /^@syncopate\/([a-z-]+)$/, replacement: `${packages}$1` }],
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Unminified: the packages' errors take their `name` from their class (NoAdapterError, ...), which
    // a minifier renames; an app that minifies should test errors with instanceof instead.
    minify: false,
    // The compiler is the point of the page: one chunk of a few hundred kB is expected.
    chunkSizeWarningLimit: 2048,
  },
  logLevel: 'warn',
});
