#!/bin/bash
# Compile time and WGSL size at 64, 128 and 256 ranks: `syncopate compile W --ranks R --time`
# (5 warm-up compiles, then --runs timed ones; passes, then the WGSL lowered after each compile).
# The CLI of commit $COMMIT, bundled from its sources (as `pnpm -r build` would build it), run on the
# development machine's CPU (2 cores, shared with other sessions: see load in the log).
# Usage: COMMIT=9e516b1 bash run.sh > log.txt 2>&1
set -u
COMMIT=${COMMIT:-9e516b1}
REPO=$(git rev-parse --show-toplevel)
TREE=$(mktemp -d)
git -C "$REPO" archive "$COMMIT" packages tsconfig.base.json | tar -x -C "$TREE"
CLI=$TREE/cli.mjs
NODE_PATH=$REPO/node_modules/.pnpm/node_modules "$REPO"/node_modules/.pnpm/node_modules/.bin/esbuild "$TREE"/packages/core/src/tools/cli.ts \
  --bundle --platform=node --format=esm --log-level=error --external:webgpu --outfile="$CLI" \
  $(for p in ir passes backends runtime core; do printf -- '--alias:@syncopate/%s=%s/packages/%s/src/index.ts ' $p "$TREE" $p; done)
echo "commit $COMMIT; node $(node --version); $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
for R in 64 128 256; do
  case $R in 64) RUNS=20;; 128) RUNS=5;; 256) RUNS=2;; esac
  for W in ag-gemm gemm-rs gemv-ar a2a-gemm embed-a2a ring-attn; do
    echo "== $W ranks $R ($(cut -d' ' -f1-3 /proc/loadavg) load)"
    echo "\$ syncopate compile $W --ranks $R --time --runs $RUNS"
    timeout 900 node "$CLI" compile $W --ranks $R --time --runs $RUNS; echo "exit $?"
  done
done
rm -rf "$TREE"
