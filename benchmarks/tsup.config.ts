import { copyFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';

const root = fileURLToPath(new URL('..', import.meta.url));
const packages = ['ir', 'passes', 'backends', 'runtime', 'core'];

// One ESM file per benchmark, with everything bundled but Dawn (`webgpu`), so it runs on a GPU
// machine that has no registry: see ../shared/device/pack.sh.
export default defineConfig({
  entry: { bench: 'benchmarks/src/device-bench.ts', stability: 'benchmarks/src/stability.ts', multi: 'benchmarks/src/multi-device-bench.ts', variants: 'benchmarks/src/variants-bench.ts', matmul: 'benchmarks/src/matmul-bench.ts', 'gemm-sweep': 'benchmarks/src/gemm-sweep.ts', suite: 'benchmarks/src/suite-bench.ts', probe: 'benchmarks/src/subgroup-matrix-probe.ts', peercopy: 'benchmarks/src/peer-copy-bench.ts', 'rs-probe': 'benchmarks/src/rs-probe.ts', 'model-suite': 'benchmarks/src/model-suite.ts', 'placed-timeline': 'benchmarks/src/placed-timeline.ts', 'host-link-probe': 'benchmarks/src/host-link-probe.ts', 'queue-overlap-probe': 'benchmarks/src/queue-overlap-probe.ts', 'map-latency-probe': 'benchmarks/src/map-latency-probe.ts', 'webgpu-call-cost': 'benchmarks/src/webgpu-call-cost.ts', 'wgsl-hashes': 'benchmarks/src/wgsl-hashes.ts', 'round-positions': 'benchmarks/src/round-positions.ts', syncopate: 'packages/core/src/tools/cli.ts', 'tp-layer': 'benchmarks/src/tp-layer-bench.ts', 'wgsl-size': 'benchmarks/src/wgsl-size.ts', fuzz: 'benchmarks/src/fuzz.ts', 'process-rows': 'benchmarks/src/process-rows.ts', 'project-nodes': 'benchmarks/src/project-nodes.ts', runtime: 'packages/runtime/src/index.ts' },
  outDir: 'dist',
  format: ['esm'],
  outExtension: () => ({ js: '.mjs' }),
  platform: 'node',
  target: 'node20',
  bundle: true,
  // Each entry one self-contained file: the GPU machine gets only the files named to pack.sh.
  splitting: false,
  noExternal: [/.*/],
  external: ['webgpu'],
  clean: false,
  // The host-copy and MPI addons beside the bundles (the runtime looks for ./host_copy.node and
  // ./mpi_transport.node there), where they were built.
  async onSuccess() {
    for (const addon of ['build/Release/host_copy.node', 'mpi/build/Release/mpi_transport.node']) {
      const path = `${root}packages/runtime/native/${addon}`;
      if (existsSync(path)) copyFileSync(path, `${root}dist/${addon.split('/').pop()}`);
    }
  },
  esbuildOptions(options) {
    options.alias = Object.fromEntries(packages.map((p) => [`@syncopate/${p}`, `${root}packages/${p}/src/index.ts`]));
  },
});
