#!/usr/bin/env bash
# The MPI transport between two processes on one machine: 64 MiB one way from host memory, median of
# 10 rounds after 2 (packages/runtime/test/mpi/bandwidth.mjs), through Open MPI's shared memory (its
# choice on one host) and over TCP alone (pml ob1, btl tcp,self: the path between machines without
# InfiniBand), five times each, alternating. The bundle is the one packages/runtime/test/mpi-transport.test.ts
# builds (run that test first: pnpm vitest run packages/runtime/test/mpi-transport.test.ts).
# Run from the repository root: bash benchmarks/results/mpi-transport-2026-11-28/run.sh > benchmarks/results/mpi-transport-2026-11-28/bandwidth.txt
set -u
cd packages/runtime
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export SYNCOPATE_MPI_ADDON=$PWD/native/mpi/build/Release/mpi_transport.node
bundle=file://$PWD/node_modules/.cache/mpi-test/index.js
echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for i in 1 2 3 4 5; do
  echo -n "shared memory: " && mpirun --oversubscribe -n 2 node test/mpi/bandwidth.mjs "$bundle"
  echo -n "TCP alone:     " && mpirun --oversubscribe -n 2 --mca pml ob1 --mca btl tcp,self node test/mpi/bandwidth.mjs "$bundle"
done
echo "# load after $(cut -d' ' -f1-3 /proc/loadavg)"
