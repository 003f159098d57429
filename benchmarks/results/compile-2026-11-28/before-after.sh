#!/bin/bash
# ag-gemm at 64 ranks, before and after in one sitting: the CLI of each commit bundled from its sources
# as run.sh bundles it, then `syncopate compile ag-gemm --ranks 64 --time --runs 50`, alternately, twice
# each, the load printed before each run. Usage: BEFORE=1097c06 AFTER=85b18b7 bash before-after.sh > before-after.txt 2>&1
set -u
BEFORE=${BEFORE:-1097c06}
AFTER=${AFTER:-85b18b7}
REPO=$(git rev-parse --show-toplevel)
DIR=$(mktemp -d)
for C in $BEFORE $AFTER; do
  mkdir -p "$DIR/$C"
  git -C "$REPO" archive "$C" packages tsconfig.base.json | tar -x -C "$DIR/$C"
  NODE_PATH=$REPO/node_modules/.pnpm/node_modules "$REPO"/node_modules/.pnpm/node_modules/.bin/esbuild "$DIR/$C"/packages/core/src/tools/cli.ts \
    --bundle --platform=node --format=esm --log-level=error --external:webgpu --outfile="$DIR/$C/cli.mjs" \
    $(for p in ir passes backends runtime core; do printf -- '--alias:@syncopate/%s=%s/packages/%s/src/index.ts ' $p "$DIR/$C" $p; done)
done
echo "node $(node --version); $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
for round in 1 2; do
  for C in $BEFORE $AFTER; do
    echo "== $C, round $round ($(cut -d' ' -f1-3 /proc/loadavg) load)"
    echo "\$ syncopate compile ag-gemm --ranks 64 --time --runs 50"
    node "$DIR/$C/cli.mjs" compile ag-gemm --ranks 64 --time --runs 50
  done
done
rm -rf "$DIR"
