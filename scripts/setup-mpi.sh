#!/usr/bin/env bash
# Open MPI from Debian's packages (4.1): mpirun, to run ranks as processes (docs/processes.md), and
# mpicc with its headers, to build the MPI transport addon (packages/runtime/native/mpi). Installs
# openmpi-bin and libopenmpi-dev where they are missing (needs apt-get and root); exits 1, saying what
# to install by hand, where it cannot. Safe to run again. quickstart.sh runs it with SYNCOPATE_WITH_MPI=1.
#   SYNCOPATE_APT_UPDATED   a file that says apt-get update already ran (quickstart.sh names it)
set -euo pipefail

if command -v mpirun >/dev/null && command -v mpicc >/dev/null; then exit 0; fi
if ! command -v apt-get >/dev/null || [ "$(id -u)" != 0 ]; then
  echo "setup-mpi: ranks as processes need Open MPI 4 (mpirun, mpicc), and this script cannot install it (needs Debian and root)." >&2
  echo "  Install it by hand (on Debian and Ubuntu: apt-get install openmpi-bin libopenmpi-dev)." >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
if [ ! -s "${SYNCOPATE_APT_UPDATED:-}" ]; then
  apt-get update -qq
  if [ -n "${SYNCOPATE_APT_UPDATED:-}" ]; then echo updated >"$SYNCOPATE_APT_UPDATED"; fi
fi
apt-get install -y -qq --no-install-recommends openmpi-bin libopenmpi-dev >/dev/null
echo "setup-mpi: installed Open MPI $(mpirun --version 2>/dev/null | head -1 | awk '{print $NF}') (openmpi-bin, libopenmpi-dev)"
