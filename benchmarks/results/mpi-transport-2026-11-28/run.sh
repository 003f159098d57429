#!/usr/bin/env bash
# The MPI transport between two processes on one machine: 64 MiB one way from host memory, median of
# 10 rounds after 2 (packages/runtime/test/mpi/bandwidth.mjs), by each path: the single copy
# (process_vm_readv, the default between processes of one host), Open MPI's shared memory
# (SYNCOPATE_MPI_SINGLE_COPY=0) and Open MPI over TCP alone (SYNCOPATE_MPI_SINGLE_COPY=0 with pml ob1,
# btl tcp,self: the path between machines without InfiniBand), five times each, alternating.
# From the repository root, after pnpm build (the MPI addon of this commit):
#   bash benchmarks/results/mpi-transport-2026-11-28/run.sh > benchmarks/results/mpi-transport-2026-11-28/bandwidth.txt
set -eu
bundle=packages/runtime/node_modules/.cache/mpi-bandwidth
npx tsup packages/runtime/src/index.ts --format esm --platform node --target node20 --out-dir "$bundle" --silent
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export SYNCOPATE_MPI_ADDON=$PWD/packages/runtime/native/mpi/build/Release/mpi_transport.node
run() { mpirun --oversubscribe -n 2 "$@" node packages/runtime/test/mpi/bandwidth.mjs "file://$PWD/$bundle/index.js"; }
echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for i in 1 2 3 4 5; do
  echo -n "single copy:   " && run
  echo -n "shared memory: " && SYNCOPATE_MPI_SINGLE_COPY=0 run
  echo -n "TCP alone:     " && SYNCOPATE_MPI_SINGLE_COPY=0 run --mca pml ob1 --mca btl tcp,self
done
echo "# load after $(cut -d' ' -f1-3 /proc/loadavg)"
