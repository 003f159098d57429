"""AllGather+GEMM and GEMM+ReduceScatter on 2 GPUs (one process each), run sequentially (NCCL, then
cuBLAS) and with PyTorch's async tensor parallelism (torch.ops.symm_mem.fused_all_gather_matmul and
fused_matmul_reduce_scatter); one JSON line per measurement, from rank 0.

    torchrun --standalone --nproc-per-node 2 benchmarks/peers/async_tp.py [--sizes 4096 8192] [--dtypes bf16 f16 f32]
    python3 benchmarks/peers/async_tp.py --nproc 2        # mp.spawn, where torchrun is missing

Shapes follow our workloads and our benchmark (benchmarks/src/device-bench.ts): a size S means the
total work of one S³ GEMM, split over R ranks; `shape` is per rank, as our JSON writes it.
  ag-gemm  A [M,K] sharded by rows (A_shard [M/R,K] per rank), B [K,N] per rank, C = allgather(A)·B
           [M,N] on every rank; M = K = S, N = S/R.
           sequential: dist.all_gather_into_tensor(A, A_shard); torch.matmul(A, B)
           async_tp:   torch.ops.symm_mem.fused_all_gather_matmul(A_shard, [B], 0, group) (also
                       returns the gathered A, as the sequential path has it)
  gemm-rs  A [M,K/R] and B [K/R,N] per rank; the partial products C_r = A·B [M,N] are reduce-scattered
           by rows (sum): rank r keeps rows r·M/R .. (r+1)·M/R; M = N = S, K = S/R.
           sequential: torch.matmul(A, B); dist.reduce_scatter_tensor(out, C)
           async_tp:   torch.ops.symm_mem.fused_matmul_reduce_scatter(A, B, "sum", 0, group)
--shapes MxNxK gives per-rank shapes directly instead.

Also measured alone: compute_only (the matmul) and comm_only (the collective), for overlap efficiency
= (sequential - async_tp) / min(compute_only, comm_only). All sequential measurements come first, then
the async-TP ones, so that a failure there leaves the rest. Where this torch has no async TP (< 2.5,
the ops missing, or the first call failing) the async_tp record says "supported": false and why.
f32 runs with TF32 off. Times: per launch the slowest rank's, between CUDA events, back to back.
"""
from __future__ import annotations

import argparse
import os
import sys
import warnings

import peerlib

WORKLOADS = ("ag-gemm", "gemm-rs")
MIN_TORCH = (2, 5)  # the fused ops arrived in torch.distributed._symmetric_memory with 2.5


def parse_shape(text: str) -> dict[str, int]:
    try:
        m, n, k = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not MxNxK") from None
    return {"m": m, "n": n, "k": k}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    p.add_argument("--workloads", nargs="+", choices=WORKLOADS, default=list(WORKLOADS))
    p.add_argument("--sizes", nargs="+", type=int, default=[4096, 8192], help="total problem S (S³ GEMM split over the ranks; default 4096 8192)")
    p.add_argument("--shapes", nargs="+", type=parse_shape, default=None, help="per-rank MxNxK instead of --sizes")
    p.add_argument("--dtypes", nargs="+", default=["bf16", "f16", "f32"], help="default bf16 f16 f32 (f32 with TF32 off)")
    p.add_argument("--nproc", type=int, default=2, help="ranks when started without torchrun (mp.spawn; default 2)")
    p.add_argument("--no-async-tp", action="store_true", help="the sequential measurements only")
    peerlib.add_common_args(p, warmup=5, runs=20)
    a = p.parse_args(argv)
    a.dtypes = [peerlib.dtype_name(d) for d in a.dtypes]
    return a


def per_rank_shape(workload: str, size: int, ranks: int) -> dict[str, int]:
    """Our benchmark's split of one size³ GEMM: ag-gemm splits N over the ranks, gemm-rs splits K."""
    if size % ranks:
        raise ValueError(f"size {size} does not split over {ranks} ranks")
    if workload == "ag-gemm":
        return {"m": size, "n": size // ranks, "k": size}
    return {"m": size, "n": size, "k": size // ranks}


def configs(a: argparse.Namespace, ranks: int) -> list[dict]:
    out = []
    for workload in a.workloads:
        shapes = [(None, s) for s in a.shapes] if a.shapes else [(size, per_rank_shape(workload, size, ranks)) for size in a.sizes]
        for size, shape in shapes:
            if shape["m"] % ranks:
                raise SystemExit(f"{workload}: M={shape['m']} does not split over {ranks} ranks")
            for dtype in a.dtypes:
                out.append({"workload": workload, "ranks": ranks, "size": size, "shape": shape, "dtype": dtype})
    return out


def async_tp_version_ok(version: str) -> tuple[bool, str | None]:
    if peerlib.parse_version(version)[:2] < MIN_TORCH:
        return False, f"torch {version} has no torch.ops.symm_mem fused ops (they arrived in {MIN_TORCH[0]}.{MIN_TORCH[1]})"
    return True, None


def comm_bytes(workload: str, shape: dict[str, int], elem: int) -> int:
    """What the collective moves, as nccl-tests sizes it: the gathered A, or the partial C scattered."""
    if workload == "ag-gemm":
        return shape["m"] * shape["k"] * elem
    return shape["m"] * shape["n"] * elem


class Problem:
    """One rank's tensors for one configuration, and the four ways of running it."""

    def __init__(self, torch, dist, cfg: dict, rank: int, ranks: int, device):
        self.torch, self.dist, self.cfg = torch, dist, cfg
        m, n, k = cfg["shape"]["m"], cfg["shape"]["n"], cfg["shape"]["k"]
        dtype = getattr(torch, cfg["dtype"])
        g = torch.Generator(device=device).manual_seed(1000 + rank)
        rand = lambda *s: torch.randn(*s, generator=g, device=device, dtype=dtype)  # noqa: E731
        if cfg["workload"] == "ag-gemm":
            self.A_shard = rand(m // ranks, k)
            self.B = rand(k, n)
            self.A = torch.empty(m, k, device=device, dtype=dtype)
            self.C = torch.empty(m, n, device=device, dtype=dtype)
        else:
            self.A = rand(m, k)
            self.B = rand(k, n)
            self.C = torch.empty(m, n, device=device, dtype=dtype)
            self.out = torch.empty(m // ranks, n, device=device, dtype=dtype)

    def compute_only(self) -> None:
        self.torch.matmul(self.A, self.B, out=self.C)

    def comm_only(self) -> None:
        if self.cfg["workload"] == "ag-gemm":
            self.dist.all_gather_into_tensor(self.A, self.A_shard)
        else:
            self.dist.reduce_scatter_tensor(self.out, self.C)

    def sequential(self):
        if self.cfg["workload"] == "ag-gemm":
            self.comm_only()
            self.compute_only()
            return self.C
        self.compute_only()
        self.comm_only()
        return self.out

    def async_tp(self, group_name: str):
        ops = self.torch.ops.symm_mem
        if self.cfg["workload"] == "ag-gemm":
            _, outs = ops.fused_all_gather_matmul(self.A_shard, [self.B], 0, group_name)
            return outs[0]
        return ops.fused_matmul_reduce_scatter(self.A, self.B, "sum", 0, group_name)


def prepare_async_tp(torch, dist) -> tuple[str | None, str | None]:
    """(group name, None) where async TP can be tried, else (None, why not)."""
    ok, why = async_tp_version_ok(torch.__version__)
    if not ok:
        return None, why
    try:
        import torch.distributed._symmetric_memory as symm_mem
    except Exception as e:  # noqa: BLE001
        return None, f"import torch.distributed._symmetric_memory failed: {type(e).__name__}: {e}"
    for op in ("fused_all_gather_matmul", "fused_matmul_reduce_scatter"):
        if not hasattr(torch.ops.symm_mem, op):
            return None, f"torch {torch.__version__} has no torch.ops.symm_mem.{op}"
    group = dist.group.WORLD
    group_name = getattr(group, "group_name", None) or dist.distributed_c10d._get_default_group().group_name
    enable = getattr(symm_mem, "enable_symm_mem_for_group", None)
    if enable is not None:  # needed up to about 2.8; deprecated (a no-op to call) later
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                enable(group_name)
        except Exception as e:  # noqa: BLE001
            return None, f"enable_symm_mem_for_group failed: {type(e).__name__}: {e}"
    return group_name, None


def symm_mem_backend(torch, device) -> str | None:
    """The symmetric-memory backend torch uses (torch >= 2.9 says), for the record."""
    try:
        import torch.distributed._symmetric_memory as symm_mem

        return str(symm_mem.get_backend(device))
    except Exception:  # noqa: BLE001
        return None


def all_ranks_ok(torch, dist, ok: bool, device) -> bool:
    flag = torch.tensor([1 if ok else 0], dtype=torch.int32, device=device)
    dist.all_reduce(flag, op=dist.ReduceOp.MIN)
    return bool(flag.item())


def worker(local_rank: int, world_size: int, a: argparse.Namespace) -> None:
    import torch
    import torch.distributed as dist

    torch.backends.cuda.matmul.allow_tf32 = False  # the old switch only: see cublas_gemm.py
    device = peerlib.init_distributed(torch, local_rank, world_size, a.cpu)
    rank = dist.get_rank()
    platform = peerlib.platform_record(torch, local_rank, cpu=a.cpu)
    timer = peerlib.Timer(torch, cpu=a.cpu)
    cfgs = configs(a, world_size)
    sequential_ms: dict[int, dict] = {}

    def measure(fn) -> dict:
        peerlib.barrier(torch, device)
        return peerlib.summarize(peerlib.slowest_rank(torch, timer.run(fn, a.warmup, a.runs), device))

    def report(cfg: dict, variant: str, **fields) -> None:
        if rank == 0:
            record = {"peer": "async-tp", "variant": variant, **cfg, **fields, **platform}
            if cfg["dtype"] == "float32":
                record["tf32"] = False
            peerlib.emit(record)

    try:
        # Pass 1: what NCCL and cuBLAS do one after the other, and each alone.
        for i, cfg in enumerate(cfgs):
            prob = Problem(torch, dist, cfg, rank, world_size, device)
            s = cfg["shape"]
            elem = prob.B.element_size()
            flops = lambda ms: peerlib.gemm_tflops(s["m"], s["n"], s["k"], ms["median"])  # noqa: E731
            seq = measure(prob.sequential)
            report(cfg, "sequential", ms=seq, tflops=flops(seq))
            comp = measure(prob.compute_only)
            report(cfg, "compute_only", ms=comp, tflops=flops(comp))
            nbytes = comm_bytes(cfg["workload"], s, elem)
            comm = measure(prob.comm_only)
            report(cfg, "comm_only", ms=comm, bytes=nbytes, busbw_gbps=peerlib.bus_bandwidth(
                "all_gather" if cfg["workload"] == "ag-gemm" else "reduce_scatter", nbytes, world_size, comm["median"])[1])
            sequential_ms[i] = {"sequential": seq, "compute_only": comp, "comm_only": comm}
            del prob

        if a.no_async_tp:
            return
        # Pass 2: PyTorch's async tensor parallelism.
        try:
            group_name, why = prepare_async_tp(torch, dist)
        except Exception as e:  # noqa: BLE001  (every rank must reach the agreement below)
            group_name, why = None, f"setting up async TP failed: {type(e).__name__}: {e}".splitlines()[0][:400]
        if not all_ranks_ok(torch, dist, group_name is not None, device) and why is None:
            why = "another rank could not set up symmetric memory"
        failed: dict[str, str] = {}  # after one failure of a fused op, the op is not tried again
        if group_name is not None:
            platform["symm_mem_backend"] = symm_mem_backend(torch, device)
        for i, cfg in enumerate(cfgs):
            if why is not None or cfg["workload"] in failed:
                report(cfg, "async_tp", supported=False, reason=why or failed[cfg["workload"]])
                continue
            prob = Problem(torch, dist, cfg, rank, world_size, device)
            try:
                got = prob.async_tp(group_name)
                ok, err = True, None
            except Exception as e:  # noqa: BLE001
                ok, err = False, f"{type(e).__name__}: {e}".splitlines()[0][:400]
            if not all_ranks_ok(torch, dist, ok, device):
                err = err or "the first call failed on another rank"
                report(cfg, "async_tp", supported=False, reason=err)
                failed[cfg["workload"]] = f"skipped after a failure: {err}"
                del prob
                continue
            want = prob.sequential()
            diff = float((got.float() - want.float()).abs().max().item() / max(want.float().abs().max().item(), 1e-30))
            fused = measure(lambda: prob.async_tp(group_name))
            base = sequential_ms[i]
            s = cfg["shape"]
            hidden = min(base["compute_only"]["median"], base["comm_only"]["median"])
            report(cfg, "async_tp", supported=True, ms=fused,
                   tflops=peerlib.gemm_tflops(s["m"], s["n"], s["k"], fused["median"]),
                   sequential_ms=base["sequential"]["median"],
                   speedup=base["sequential"]["median"] / fused["median"],
                   overlap_efficiency=(base["sequential"]["median"] - fused["median"]) / hidden if hidden > 0 else None,
                   max_rel_diff=diff)
            del prob, got, want
    finally:
        dist.destroy_process_group()


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    peerlib.keep_multicast_off()
    ranks = int(os.environ["WORLD_SIZE"]) if peerlib.launched_by_torchrun() else a.nproc
    if a.dry_run:
        for cfg in configs(a, ranks):
            peerlib.emit(peerlib.dry_run_record("async-tp", {**cfg, "variants": ["sequential", "compute_only", "comm_only"] + ([] if a.no_async_tp else ["async_tp"]),
                                                              "warmup": a.warmup, "runs": a.runs, "env": peerlib.env_record()}))
        return 0
    peerlib.launch(worker, a, ranks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
