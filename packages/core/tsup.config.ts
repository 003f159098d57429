import { existsSync } from 'node:fs';
import { defineConfig } from 'tsup';

// src/demo.ts (the `pnpm demo` entry, built to dist/demo.js) is picked up once it exists.
const entry = ['src/index.ts', ...(existsSync('src/demo.ts') ? ['src/demo.ts'] : [])];

export default defineConfig({
  entry,
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'es2022',
});
