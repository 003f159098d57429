"""What the peer scripts share: timing summaries, the record every JSON line carries, the environment
that decides NCCL's transport, and how a 2-GPU script is launched (torchrun, or mp.spawn without it).

Nothing here imports torch at module level: `--help` and `--dry-run` work where torch is missing, and
the unit tests (`python3 -m unittest discover benchmarks/peers`) run on a machine without it.
"""
from __future__ import annotations

import json
import math
import os
import socket
import sys
import time
from typing import Any, Callable, Iterable, Sequence

MIB = 1 << 20

# Read (never unset) into every record. The GPU machines set the first three to keep NVLink multicast
# off: a program that uses multicast can take the host's shared GPUs out of service.
MULTICAST_ENV = ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS")
MULTICAST_OFF = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}
RECORDED_ENV = MULTICAST_ENV + (
    "NCCL_P2P_DISABLE",
    "NCCL_SHM_DISABLE",
    "NCCL_ALGO",
    "NCCL_PROTO",
    "NCCL_DEBUG",
    "CUDA_VISIBLE_DEVICES",
    "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE",
    "TORCH_SYMM_MEM_ENABLE_NATIVE_ASYNC_TP",
    "TORCH_SYMMMEM",  # the symmetric-memory backend (CUDA, NVSHMEM, NCCL), where one is forced
)


def keep_multicast_off(environ: dict[str, str] | None = None) -> dict[str, str]:
    """Set the multicast switches to off where they are missing; a value already there is left alone."""
    env = os.environ if environ is None else environ
    for name, value in MULTICAST_OFF.items():
        env.setdefault(name, value)
    return {name: env[name] for name in MULTICAST_ENV}


def env_record(environ: dict[str, str] | None = None) -> dict[str, str | None]:
    env = os.environ if environ is None else environ
    return {name: env.get(name) for name in RECORDED_ENV}


def percentile(sorted_samples: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default); q in [0, 1]."""
    if not sorted_samples:
        raise ValueError("no samples")
    pos = (len(sorted_samples) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_samples) - 1)
    return sorted_samples[lo] + (sorted_samples[hi] - sorted_samples[lo]) * (pos - lo)


def summarize(samples_ms: Iterable[float]) -> dict[str, float | int]:
    """Median, p10, p90, min and max of timings in ms (the median as in benchmarks/src/stats.ts)."""
    s = sorted(float(x) for x in samples_ms)
    return {
        "median": percentile(s, 0.5),
        "p10": percentile(s, 0.1),
        "p90": percentile(s, 0.9),
        "min": s[0],
        "max": s[-1],
        "runs": len(s),
    }


def gemm_tflops(m: int, n: int, k: int, ms: float) -> float:
    return 2.0 * m * n * k / (ms * 1e-3) / 1e12


def gbps(nbytes: int, ms: float) -> float:
    """Decimal GB/s (1e9 bytes), as NCCL's tests and our benchmarks write them."""
    return nbytes / (ms * 1e-3) / 1e9


def bus_bandwidth(op: str, total_bytes: int, ranks: int, ms: float) -> tuple[float, float]:
    """(algorithm bandwidth, bus bandwidth) in GB/s, as nccl-tests defines them.

    `total_bytes` is the size nccl-tests reports: the all-gather's output, the reduce-scatter's input
    (each rank sends and receives total_bytes * (ranks - 1) / ranks of it). The bus bandwidth is what
    one link carries and does not depend on the rank count; at 2 ranks it is the bytes one rank
    receives over the time, comparable with a one-way GPU-to-GPU copy.
    """
    if op not in ("all_gather", "reduce_scatter"):
        raise ValueError(f"unknown collective {op!r}")
    alg = gbps(total_bytes, ms)
    return alg, alg * (ranks - 1) / ranks


def powers_of_two_mib(lo_mib: int, hi_mib: int) -> list[int]:
    """Byte sizes lo, 2lo, ..., hi MiB (both powers of two)."""
    for v in (lo_mib, hi_mib):
        if v <= 0 or v & (v - 1):
            raise ValueError(f"{v} MiB is not a power of two")
    if lo_mib > hi_mib:
        raise ValueError("the smallest size is larger than the largest")
    sizes, v = [], lo_mib
    while v <= hi_mib:
        sizes.append(v * MIB)
        v *= 2
    return sizes


def parse_version(text: str) -> tuple[int, ...]:
    """'2.11.0+cu130' -> (2, 11, 0); '2.6.0a0+git1234' -> (2, 6, 0)."""
    parts = []
    for piece in text.split("+")[0].split(".")[:3]:
        digits = ""
        for ch in piece:
            if not ch.isdigit():
                break
            digits += ch
        parts.append(int(digits or 0))
    return tuple(parts)


DTYPE_NAMES = {"f32": "float32", "fp32": "float32", "float": "float32", "float32": "float32",
               "f16": "float16", "fp16": "float16", "half": "float16", "float16": "float16",
               "bf16": "bfloat16", "bfloat16": "bfloat16"}


def dtype_name(text: str) -> str:
    """A dtype as torch names it (float32, float16, bfloat16) from any of the usual spellings."""
    try:
        return DTYPE_NAMES[text.lower().removeprefix("torch.")]
    except KeyError:
        raise ValueError(f"unknown dtype {text!r} (f32, f16 or bf16)") from None


# --- the record every JSON line carries --------------------------------------------------------------


def nccl_version(torch: Any) -> str | None:
    try:
        v = torch.cuda.nccl.version()
    except Exception:
        return None
    if isinstance(v, tuple):
        return ".".join(str(x) for x in v)
    if isinstance(v, int):  # older torch: 2.18.3 as 21803
        return f"{v // 10000}.{v // 100 % 100}.{v % 100}" if v >= 10000 else f"{v // 1000}.{v // 100 % 10}.{v % 100}"
    return str(v)


def platform_record(torch: Any, device_index: int = 0, cpu: bool = False) -> dict[str, Any]:
    """Device name, torch, CUDA and NCCL versions, and the environment that decides NCCL's transport."""
    if cpu:
        device = "cpu (control-flow check: figures mean nothing)"
    else:
        device = torch.cuda.get_device_name(device_index)
    return {
        "device": device,
        "torch": torch.__version__,
        "cuda": getattr(torch.version, "cuda", None),
        "nccl": None if cpu else nccl_version(torch),
        "env": env_record(),
    }


def emit(record: dict[str, Any], out=None) -> None:
    """One JSON line, flushed at once so that a run cut off by its time limit keeps what it measured."""
    out = out or sys.stdout
    out.write(json.dumps(record) + "\n")
    out.flush()


def dry_run_record(script: str, plan: dict[str, Any]) -> dict[str, Any]:
    return {"peer": script, "dry_run": True, **plan}


# --- timing ------------------------------------------------------------------------------------------


class Timer:
    """Times `fn` run back to back: CUDA events around each launch, one synchronization at the end
    (with a host round trip between launches the GPU idles and lowers its clocks). On the CPU (the
    control-flow check) each call is timed with the wall clock."""

    def __init__(self, torch: Any, cpu: bool = False):
        self.torch = torch
        self.cpu = cpu

    def sync(self) -> None:
        if not self.cpu:
            self.torch.cuda.synchronize()

    def run(self, fn: Callable[[], Any], warmup: int, runs: int) -> list[float]:
        for _ in range(warmup):
            fn()
        self.sync()
        if self.cpu:
            times = []
            for _ in range(runs):
                t0 = time.perf_counter()
                fn()
                times.append((time.perf_counter() - t0) * 1e3)
            return times
        Event = self.torch.cuda.Event
        starts = [Event(enable_timing=True) for _ in range(runs)]
        ends = [Event(enable_timing=True) for _ in range(runs)]
        for start, end in zip(starts, ends):
            start.record()
            fn()
            end.record()
        self.sync()
        return [s.elapsed_time(e) for s, e in zip(starts, ends)]


# --- launching the 2-GPU scripts ---------------------------------------------------------------------


def launched_by_torchrun(environ: dict[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return all(name in env for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"))


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spawned(local_rank: int, world_size: int, worker: Callable[..., None], args: Any) -> None:
    os.environ.update(RANK=str(local_rank), LOCAL_RANK=str(local_rank), WORLD_SIZE=str(world_size))
    worker(local_rank, world_size, args)


def launch(worker: Callable[[int, int, Any], None], args: Any, nprocs: int) -> None:
    """Runs worker(local_rank, world_size, args) in every rank: directly under torchrun, else through
    torch.multiprocessing.spawn with a free local port (children inherit os.environ, so the NCCL and
    multicast variables set before this call hold in every rank)."""
    if launched_by_torchrun():
        worker(int(os.environ["LOCAL_RANK"]), int(os.environ["WORLD_SIZE"]), args)
        return
    import torch.multiprocessing as mp

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(free_port()))
    mp.spawn(_spawned, args=(nprocs, worker, args), nprocs=nprocs, join=True)


def init_distributed(torch: Any, local_rank: int, world_size: int, cpu: bool, timeout_s: int = 180):
    """NCCL on the GPUs (gloo for the CPU check); returns the torch.device of this rank."""
    import datetime

    import torch.distributed as dist

    if cpu:
        device = torch.device("cpu")
        backend = "gloo"
    else:
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
        backend = "nccl"
    dist.init_process_group(
        backend=backend,
        init_method="env://",
        rank=int(os.environ.get("RANK", local_rank)),
        world_size=world_size,
        timeout=datetime.timedelta(seconds=timeout_s),
    )
    return device


def barrier(torch: Any, device: Any) -> None:
    import torch.distributed as dist

    if device.type == "cuda":
        dist.barrier(device_ids=[device.index])
    else:
        dist.barrier()


def slowest_rank(torch: Any, times_ms: list[float], device: Any) -> list[float]:
    """Per launch, the time of the slowest rank: a collective is done when every rank is done."""
    import torch.distributed as dist

    t = torch.tensor(times_ms, dtype=torch.float64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return [float(x) for x in t.tolist()]


def add_common_args(parser: Any, warmup: int, runs: int) -> None:
    parser.add_argument("--warmup", type=int, default=warmup, help=f"untimed launches first (default {warmup})")
    parser.add_argument("--runs", type=int, default=runs, help=f"timed launches, back to back (default {runs})")
    parser.add_argument("--dry-run", action="store_true", help="print what would be measured, as JSON lines, without importing torch")
    parser.add_argument("--cpu", action="store_true",
                        help="control-flow check on the CPU (gloo, wall clock); the figures mean nothing")
