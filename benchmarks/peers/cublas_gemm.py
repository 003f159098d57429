"""cuBLAS GEMM through PyTorch at the shapes our GEMM benchmark uses; prints one JSON line per shape.

    python3 benchmarks/peers/cublas_gemm.py [SIZE ...]
"""
import json
import sys

import torch


def bench(size: int, dtype: torch.dtype, runs: int = 20) -> dict:
    a = torch.randn(size, size, device="cuda", dtype=dtype)
    b = torch.randn(size, size, device="cuda", dtype=dtype)
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        a @ b
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    ms = times[len(times) // 2]
    return {"peer": "cublas", "size": size, "dtype": str(dtype).removeprefix("torch."), "ms": ms, "tflops": 2 * size**3 / (ms * 1e-3) / 1e12}


def main() -> None:
    torch.backends.cuda.matmul.allow_tf32 = False  # f32 means f32: no TF32 tensor cores
    sizes = [int(s) for s in sys.argv[1:]] or [4096]
    for size in sizes:
        for dtype in (torch.float32, torch.float16):
            print(json.dumps(bench(size, dtype)), flush=True)


if __name__ == "__main__":
    main()
