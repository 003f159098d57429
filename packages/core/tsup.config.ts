import { defineConfig } from 'tsup';

// dist/index.js: the library. dist/demo.js: the `pnpm demo` entry. dist/cli.js: the `syncopate`
// executable (its #! line is kept and the file made executable).
export default defineConfig({
  entry: { index: 'src/index.ts', demo: 'src/tools/demo.ts', cli: 'src/tools/cli.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'es2022',
});
