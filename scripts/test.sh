#!/usr/bin/env bash
# Sets up and builds the workspace, then type-checks and runs all tests.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
# The host-copy addon must build here (a C compiler and Node's headers are on this machine kind), and its test checks it loaded.
export SYNCOPATE_REQUIRE_HOST_COPY_ADDON=1
# Ranks as processes are tested under mpirun: Open MPI is installed and the MPI addon must build.
export SYNCOPATE_WITH_MPI=1 SYNCOPATE_REQUIRE_MPI_ADDON=1
bash scripts/quickstart.sh
# node-gyp's headers for the addon's build when check-packages.mjs installs the packed runtime.
source scripts/node-headers.sh
pnpm typecheck
# The tests that start processes under mpirun run after the others, one file at a time: each starts
# two or three processes with software devices, which on a two-core machine starve the GPU tests
# running beside them into timeouts.
mpi_tests=(packages/runtime/test/mpi-transport.test.ts packages/core/test/mpi-run.test.ts packages/core/test/processes-doc.test.ts)
pnpm exec vitest run $(printf -- '--exclude %s ' "${mpi_tests[@]}")
pnpm exec vitest run --no-file-parallelism "${mpi_tests[@]}"
# The packed tarballs, installed with npm into an empty project: ESM, CJS, types, the CLI.
node scripts/check-packages.mjs
# The API reference builds without errors (TypeDoc, ~10 s; into the gitignored docs/api).
pnpm --silent docs:api
# The browser example in Debian's Chromium headless: compiles and runs ag-gemm on its WebGPU
# (SwiftShader without a GPU). Installing Chromium takes ~15 s, the test ~10 s.
bash scripts/setup-chromium.sh
pnpm --silent test:browser
