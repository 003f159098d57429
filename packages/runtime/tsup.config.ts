import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  // The declarations name WebGPU's global types (GPUDevice, ...); this makes a consumer's TypeScript
  // load them from @webgpu/types (a dependency) whatever its own `types` setting.
  dts: { banner: '/// <reference types="@webgpu/types" />' },
  clean: true,
  sourcemap: true,
  target: 'es2022',
  // host-copy.ts finds its addon beside the module (import.meta.url), in the CommonJS build too.
  shims: true,
});
