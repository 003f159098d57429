"""NCCL all-gather and reduce-scatter bandwidth through torch.distributed, one process per GPU, sizes
from 1 MiB to 256 MiB (powers of two); one JSON line per collective and size, from rank 0.

    torchrun --standalone --nproc-per-node 2 benchmarks/peers/nccl_bandwidth.py [--transport nvlink]
    python3 benchmarks/peers/nccl_bandwidth.py --nproc 2 [--transport host]   # mp.spawn, no torchrun

--transport nvlink (the default) leaves NCCL its GPU-to-GPU path (P2P over NVLink where the GPUs are
linked); --transport host sets NCCL_P2P_DISABLE=1 and NCCL_SHM_DISABLE=0 before NCCL starts, so data
goes through host shared memory: the path our WebGPU peer-copy has to take. The variables that keep
NVLink multicast off (NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1, NVSHMEM_DISABLE_NVLS=1)
are never unset; where missing they are set to off. Every record carries their values.

Sizes (--min-mib, --max-mib) are what each rank contributes, bytes_per_rank: the all-gather's input,
the reduce-scatter's output; as our peer-copy moves a chunk of that many bytes. Records carry too the
size nccl-tests prints, bytes = bytes_per_rank * ranks (the all-gather's output, the reduce-scatter's
input). busbw_gbps is nccl-tests' bus bandwidth (at 2 ranks: the bytes one rank receives over the
time). Times are, per launch, the slowest rank's, between CUDA events around back-to-back launches.
"""
from __future__ import annotations

import argparse
import os
import sys

import peerlib

OPS = ("all_gather", "reduce_scatter")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    p.add_argument("--transport", choices=("auto", "nvlink", "host"), default="nvlink",
                   help="nvlink: NCCL's P2P path (default); host: NCCL_P2P_DISABLE=1, NCCL_SHM_DISABLE=0; auto: as the environment says")
    p.add_argument("--ops", nargs="+", choices=OPS, default=list(OPS))
    p.add_argument("--min-mib", type=int, default=1, help="smallest bytes_per_rank (default 1 MiB)")
    p.add_argument("--max-mib", type=int, default=256, help="largest bytes_per_rank (default 256 MiB)")
    p.add_argument("--dtype", default="f32", help="element type (default f32; reduce-scatter sums in it)")
    p.add_argument("--nproc", type=int, default=2, help="ranks when started without torchrun (mp.spawn; default 2)")
    peerlib.add_common_args(p, warmup=5, runs=30)
    a = p.parse_args(argv)
    a.sizes = peerlib.powers_of_two_mib(a.min_mib, a.max_mib)
    a.dtype = peerlib.dtype_name(a.dtype)
    return a


def resolve_transport(requested: str, environ: dict[str, str]) -> str:
    """Sets the environment for the transport asked for (before NCCL starts) and names it."""
    p2p_off = environ.get("NCCL_P2P_DISABLE", "0") not in ("0", "")
    if requested == "host":
        environ["NCCL_P2P_DISABLE"] = "1"
        environ["NCCL_SHM_DISABLE"] = "0"
        return "host"
    if requested == "nvlink":
        if p2p_off:
            raise SystemExit("--transport nvlink, but NCCL_P2P_DISABLE is set in the environment: unset it or use --transport host")
        return "nvlink"
    return "host" if p2p_off else "nvlink"


def plan(a: argparse.Namespace, ranks: int) -> list[dict]:
    return [{"op": op, "bytes": n * ranks, "bytes_per_rank": n} for op in a.ops for n in a.sizes]


def worker(local_rank: int, world_size: int, a: argparse.Namespace) -> None:
    import torch
    import torch.distributed as dist

    device = peerlib.init_distributed(torch, local_rank, world_size, a.cpu)
    rank = dist.get_rank()
    platform = peerlib.platform_record(torch, local_rank, cpu=a.cpu)
    if not a.cpu and world_size > 1:
        platform["p2p_access"] = torch.cuda.can_device_access_peer(local_rank, (local_rank + 1) % world_size)
    timer = peerlib.Timer(torch, cpu=a.cpu)
    dtype = getattr(torch, a.dtype)
    elem = torch.empty((), dtype=dtype).element_size()
    try:
        for item in plan(a, world_size):
            op, total = item["op"], item["bytes"]
            if item["bytes_per_rank"] % elem:
                continue
            n = item["bytes_per_rank"] // elem
            if op == "all_gather":
                inp = torch.full((n,), float(rank + 1), dtype=dtype, device=device)
                out = torch.empty(n * world_size, dtype=dtype, device=device)
                fn = lambda: dist.all_gather_into_tensor(out, inp)  # noqa: E731
            else:
                inp = torch.full((n * world_size,), float(rank + 1), dtype=dtype, device=device)
                out = torch.empty(n, dtype=dtype, device=device)
                fn = lambda: dist.reduce_scatter_tensor(out, inp)  # noqa: E731
            peerlib.barrier(torch, device)
            times = peerlib.slowest_rank(torch, timer.run(fn, a.warmup, a.runs), device)
            verified = check(torch, op, out, world_size, n)
            ms = peerlib.summarize(times)
            algbw, busbw = peerlib.bus_bandwidth(op, total, world_size, ms["median"])
            if rank == 0:
                peerlib.emit({
                    "peer": "nccl",
                    "op": op,
                    "transport": a.transport,
                    "ranks": world_size,
                    "bytes": total,
                    "bytes_per_rank": item["bytes_per_rank"],
                    "dtype": a.dtype,
                    "verified": verified,
                    "ms": ms,
                    "algbw_gbps": algbw,
                    "busbw_gbps": busbw,
                    **platform,
                })
            del inp, out
    finally:
        dist.destroy_process_group()


def check(torch, op: str, out, world_size: int, n: int) -> bool:
    if op == "all_gather":
        want = torch.arange(1, world_size + 1, dtype=out.dtype, device=out.device).repeat_interleave(n)
        return bool(torch.equal(out, want))
    return bool((out == world_size * (world_size + 1) / 2).all().item())


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    peerlib.keep_multicast_off()
    a.transport = resolve_transport(a.transport, os.environ)
    ranks = int(os.environ["WORLD_SIZE"]) if peerlib.launched_by_torchrun() else a.nproc
    if a.dry_run:
        for item in plan(a, ranks):
            peerlib.emit(peerlib.dry_run_record("nccl", {**item, "transport": a.transport, "ranks": ranks, "dtype": a.dtype,
                                                          "warmup": a.warmup, "runs": a.runs, "env": peerlib.env_record()}))
        return 0
    peerlib.launch(worker, a, ranks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
