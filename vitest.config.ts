import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  resolve: {
    // Tests import @syncopate/<pkg> from packages/<pkg>/src, so they need no build.
    alias: [{ find: /^@syncopate\/([a-z-]+)$/, replacement: `${root}packages/$1/src/index.ts` }],
  },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'packages/*/src/**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**'],
    passWithNoTests: true,
    // GPU tests on the software adapter compile shaders with LLVM; a cold shader cache (a new CI
    // machine) makes the first compile of each take seconds.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
