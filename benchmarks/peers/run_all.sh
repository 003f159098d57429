#!/usr/bin/env bash
# Runs every peer script, one after another, on the GPU machine (from the project root):
#
#   bash benchmarks/peers/run_all.sh OUTDIR [OUR_RESULTS.json]
#
# Writes OUTDIR/peers.jsonl (every JSON line of every script), OUTDIR/peers.log (stderr, what ran, how
# long, nvidia-smi's view of the GPUs, NCCL's transport lines) and, given our results.json,
# OUTDIR/peers-table.md (merge_table.py). Three files: the device tool brings back at most eight.
#
# The 2-GPU scripts (NCCL bandwidth over NVLink and through the host, async TP) are skipped where one
# GPU is visible. Each script runs under `timeout` (PEERS_TIMEOUT_S, default 240 s), and the whole
# run stops starting scripts once PEERS_BUDGET_S (default 540 s) is spent, so that a hang cannot take
# a 10-minute device call with it. Expected on 2×H200: about 2–3 minutes, mostly process start-up
# (torch import, NCCL and symmetric-memory set-up); the measurements themselves take seconds.
#
# Environment: PYTHON (default python3); PEERS_GPUS (skip detection); PEERS_DRY_RUN=1 (each script's
# --dry-run: what would run, no torch needed); PEERS_SMOKE=1 (--cpu and tiny sizes: the plumbing on a
# machine without a GPU, figures meaningless). The NVLink-multicast switches (NCCL_NVLS_ENABLE,
# TORCH_SYMM_MEM_DISABLE_MULTICAST, NVSHMEM_DISABLE_NVLS) are never unset; where missing they are set off.
set -u -o pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${1:?usage: run_all.sh OUTDIR [OUR_RESULTS.json]}
ours=${2:-}
mkdir -p "$out"
jsonl=$out/peers.jsonl
log=$out/peers.log
: >"$jsonl"
: >"$log"

export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
export TORCH_SYMM_MEM_DISABLE_MULTICAST=${TORCH_SYMM_MEM_DISABLE_MULTICAST:-1}
export NVSHMEM_DISABLE_NVLS=${NVSHMEM_DISABLE_NVLS:-1}
py=${PYTHON:-python3}
per_script=${PEERS_TIMEOUT_S:-240}
budget=${PEERS_BUDGET_S:-540}
start=$SECONDS

say() { echo "peers: $*" | tee -a "$log" >&2; }

# Extra arguments for every script (dry run), and per script (smoke run on the CPU).
common=()
[ -n "${PEERS_DRY_RUN:-}" ] && common+=(--dry-run)
smoke_cublas=() smoke_copy=() smoke_nccl=() smoke_tp=()
if [ -n "${PEERS_SMOKE:-}" ]; then
  common+=(--cpu --warmup 1 --runs 3)
  smoke_cublas=(--sizes 64) smoke_copy=(--max-mib 2) smoke_nccl=(--max-mib 2) smoke_tp=(--sizes 128)
fi

gpus=${PEERS_GPUS:-}
if [ -z "$gpus" ] && [ -z "${CUDA_VISIBLE_DEVICES:-}" ] && command -v nvidia-smi >/dev/null 2>&1; then
  gpus=$(nvidia-smi -L 2>>"$log" | grep -c '^GPU ')
fi
if [ -z "$gpus" ] || [ "$gpus" = 0 ]; then
  gpus=$("$py" -c 'import torch; print(torch.cuda.device_count())' 2>>"$log" || echo 0)
fi
say "$(date -u +%Y-%m-%dT%H:%M:%SZ), $gpus GPU(s) visible, python: $("$py" --version 2>&1)"
if command -v nvidia-smi >/dev/null 2>&1 && [ -z "${PEERS_DRY_RUN:-}${PEERS_SMOKE:-}" ]; then
  { nvidia-smi -L; nvidia-smi topo -m; } >>"$log" 2>&1
fi

# Two processes: torchrun where it is installed, else the script's own mp.spawn (it detects which).
if [ -z "${PEERS_DRY_RUN:-}" ] && command -v torchrun >/dev/null 2>&1; then
  launch2=(torchrun --standalone --nproc-per-node 2)
else
  launch2=("$py")
fi

# step NAME [VAR=VALUE ...] -- COMMAND...: JSON lines to peers.jsonl, everything else to peers.log.
step() {
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local left=$((budget - (SECONDS - start)))
  local limit=$((left < per_script ? left : per_script))
  if [ "$limit" -lt 20 ]; then
    say "$name: not run, ${budget}s budget spent"
    return
  fi
  say "$name: ${envs[*]} $* (limit ${limit}s)"
  local t0=$SECONDS before
  before=$(wc -l <"$jsonl")
  env "${envs[@]}" timeout -k 10 "$limit" "$@" 2>>"$log" | while IFS= read -r line; do
    case $line in
      '{'*) printf '%s\n' "$line" >>"$jsonl" ;;
      *) printf '%s\n' "$line" >>"$log" ;;
    esac
  done
  local rc=${PIPESTATUS[0]}
  local what="exit $rc"
  [ "$rc" = 124 ] || [ "$rc" = 137 ] && what="TIMED OUT (exit $rc)"
  say "$name: $what after $((SECONDS - t0))s, $(($(wc -l <"$jsonl") - before)) JSON lines"
}

step cublas_gemm -- "$py" "$here/cublas_gemm.py" "${common[@]}" "${smoke_cublas[@]}"
# GPU0 -> host -> GPU1; with one GPU, GPU0 -> host -> GPU0 (our peer-copy between two WebGPU devices on it).
step host_copy -- "$py" "$here/host_copy.py" --src 0 --dst $((gpus >= 2 ? 1 : 0)) "${common[@]}" "${smoke_copy[@]}"
if [ "$gpus" -ge 2 ]; then
  step nccl_nvlink NCCL_DEBUG=INFO -- "${launch2[@]}" "$here/nccl_bandwidth.py" --transport nvlink "${common[@]}" "${smoke_nccl[@]}"
  step nccl_host NCCL_DEBUG=INFO NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=0 -- \
    "${launch2[@]}" "$here/nccl_bandwidth.py" --transport host "${common[@]}" "${smoke_nccl[@]}"
  step async_tp -- "${launch2[@]}" "$here/async_tp.py" "${common[@]}" "${smoke_tp[@]}"
  # Which transport NCCL took, in its own words (NCCL_DEBUG=INFO): P2P for NVLink, SHM through the host.
  grep -E 'NCCL INFO Channel 00.* via ' "$log" | sort -u | head -n 8 | sed 's/^/peers: nccl transport: /' >&2
else
  say "nccl_nvlink, nccl_host, async_tp: not run, they need 2 GPUs ($gpus visible)"
fi

if [ -n "$ours" ]; then
  if [ -f "$ours" ]; then
    "$py" "$here/merge_table.py" "$ours" "$jsonl" --out "$out/peers-table.md" >/dev/null 2>>"$log" \
      && say "table: $out/peers-table.md" || say "merge_table.py failed (see peers.log)"
  else
    say "no $ours: no table"
  fi
fi
say "done in $((SECONDS - start))s: $(wc -l <"$jsonl") JSON lines in $jsonl"
