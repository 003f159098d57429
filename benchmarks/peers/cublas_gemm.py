"""cuBLAS GEMM through PyTorch (torch.matmul), the peer of our standalone GEMM: square size³ products
(and MxNxK ones with --shapes) in f32 with TF32 off (f32 means f32, as in our WGSL GEMM) and in f16;
one JSON line per shape and dtype.

    python3 benchmarks/peers/cublas_gemm.py [--sizes 4096 8192] [--shapes 4000x3000x1000] [--dtypes f32 f16] [--init randn]

Medians of back-to-back launches after warm-ups, each launch between two CUDA events, as our
benchmark times its kernels (see benchmarks/README.md). One GPU.
"""
from __future__ import annotations

import argparse
import sys

import peerlib


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sizes_pos", nargs="*", type=int, metavar="SIZE", help="sizes (same as --sizes; kept for the old command line)")
    p.add_argument("--sizes", nargs="+", type=int, default=None, help="M=N=K of each product (default 4096 8192)")
    p.add_argument("--shapes", nargs="+", type=parse_shape, default=[], metavar="MxNxK",
                   help="non-square products besides the sizes, e.g. 4000x3000x1000 (default none)")
    p.add_argument("--dtypes", nargs="+", default=["f32", "f16"], help="f32 (TF32 off), f16, bf16 (default f32 f16)")
    p.add_argument("--init", choices=("randn", "zeros"), default="randn",
                   help="input values: random normal (default), or zeros as our benchmark uses (tensor cores draw less power on zeros)")
    p.add_argument("--device", type=int, default=0, help="CUDA device index (default 0)")
    peerlib.add_common_args(p, warmup=10, runs=20)
    a = p.parse_args(argv)
    a.sizes = a.sizes or a.sizes_pos or [4096, 8192]
    a.dtypes = [peerlib.dtype_name(d) for d in a.dtypes]
    return a


def parse_shape(text: str) -> tuple[int, int, int]:
    parts = text.lower().split("x")
    if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise argparse.ArgumentTypeError(f"{text!r} is not MxNxK (three positive integers)")
    return (int(parts[0]), int(parts[1]), int(parts[2]))


def square_size(m: int, n: int, k: int) -> int | None:
    """The record's `size`: M = N = K of a square product, None for any other."""
    return m if m == n == k else None


def plan(a: argparse.Namespace) -> list[dict]:
    shapes = [(s, s, s) for s in a.sizes] + list(a.shapes)
    return [{"size": square_size(m, n, k), "shape": {"m": m, "n": n, "k": k}, "dtype": d} for (m, n, k) in shapes for d in a.dtypes]


def bench(torch, timer: peerlib.Timer, device, shape: dict, dtype_name: str, a: argparse.Namespace) -> dict:
    m, n, k = shape["m"], shape["n"], shape["k"]
    dtype = getattr(torch, dtype_name)
    make = torch.randn if a.init == "randn" else torch.zeros
    x = make(m, k, device=device, dtype=dtype)
    y = make(k, n, device=device, dtype=dtype)
    out = torch.empty(m, n, device=device, dtype=dtype)
    times = timer.run(lambda: torch.matmul(x, y, out=out), a.warmup, a.runs)
    ms = peerlib.summarize(times)
    del x, y, out
    return {
        "peer": "cublas",
        "op": "gemm",
        "size": square_size(m, n, k),
        "shape": {"m": m, "n": n, "k": k},
        "dtype": dtype_name,
        "tf32": tf32_state(torch) if dtype_name == "float32" else None,
        "init": a.init,
        "ms": ms,
        "tflops": peerlib.gemm_tflops(m, n, k, ms["median"]),
    }


def tf32_state(torch) -> bool | None:
    try:
        return bool(torch.backends.cuda.matmul.allow_tf32)
    except Exception:  # torch refuses to say after a mix of its old and new TF32 switches
        return None


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    peerlib.keep_multicast_off()
    if a.dry_run:
        for item in plan(a):
            peerlib.emit(peerlib.dry_run_record("cublas", {**item, "warmup": a.warmup, "runs": a.runs, "init": a.init}))
        return 0
    import torch

    # Only the old switch: torch >= 2.9 refuses to report TF32 after a mix of the old and new APIs.
    torch.backends.cuda.matmul.allow_tf32 = False
    device = torch.device("cpu") if a.cpu else torch.device("cuda", a.device)
    if not a.cpu:
        torch.cuda.set_device(device)
    platform = peerlib.platform_record(torch, a.device, cpu=a.cpu)
    timer = peerlib.Timer(torch, cpu=a.cpu)
    for item in plan(a):
        peerlib.emit({**bench(torch, timer, device, item["shape"], item["dtype"], a), **platform})
    return 0


if __name__ == "__main__":
    sys.exit(main())
