#!/usr/bin/env bash
# Device call 3: the two-device suite with the native host copy at libuv's default pool (4 threads,
# the runtime's default after calls 1-2); the host copier alone (thread scaling with a pool of 16,
# then both copiers at the default pool beside PyTorch's pinned copies); the peers (cuBLAS, NCCL over
# NVLink and through the host, PyTorch pinned copies, async TP) in the same call.
# Pack: pnpm build && pnpm bench:build && bash ../shared/device/pack.sh dist/suite.mjs dist/peercopy.mjs dist/host_copy.node
set -u
source .devpack/prelude.sh
app=.devpack/app
log="$OUT/log.txt"
step() { local limit=$1; shift; echo "=== $(date +%T) $*" >>"$log"; timeout "$limit" "$@" >>"$log" 2>&1; echo "=== $(date +%T) rc=$?" >>"$log"; }
{ nvidia-smi -L; nvidia-smi topo -m; } >>"$log" 2>&1
export SYNCOPATE_DAWN_ENABLE=disable_robustness
suite() { local limit=$1; shift; rm -rf /tmp/s; step "$limit" node $app/suite.mjs --quick --size 4096 --no-sweeps --no-trace --devices 2 --runs 30 --out /tmp/s "$@"; cat /tmp/s/suite.jsonl >>"$OUT/suite.jsonl" 2>/dev/null; cat /tmp/s/suite.md >>"$OUT/suite.md" 2>/dev/null; }
suite 110 --dtype f16 --only ag-gemm,gemm-rs
suite 200 --dtype f32
step 30 env UV_THREADPOOL_SIZE=16 node $app/peercopy.mjs --probes-only --out /tmp/p16; cp /tmp/p16/peer-copy.json "$OUT/peer-copy-probes-pool16.json"
step 90 node $app/peercopy.mjs --src 0 --dst 1 --no-probes --out "$OUT"
PEERS_BUDGET_S=100 PEERS_TIMEOUT_S=40 bash benchmarks/peers/run_all.sh "$OUT" >>"$log" 2>&1
