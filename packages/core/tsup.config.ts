import { existsSync } from 'node:fs';
import { defineConfig } from 'tsup';

// src/demo.ts (the `pnpm demo` entry, built to dist/demo.js) is picked up once it exists;
// src/cli.ts is the `syncopate` executable (dist/cli.js; its #! line is kept and the file made executable).
const entry = ['src/index.ts', ...['src/demo.ts', 'src/cli.ts'].filter((f) => existsSync(f))];

export default defineConfig({
  entry,
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'es2022',
});
