"""PyTorch's tensor-parallel transformer layer (Megatron's sequence-parallel form), one process per GPU,
written the plain way: all-gather, GEMMs, causal SDPA, reduce-scatter (NCCL), RMSNorm, SiLU·up, the
residuals; the same layer as our `tp-layer` (packages/core/src/layers/tp-layer.ts). One JSON line from
rank 0: the layer's time, the compute alone (the layer with every collective replaced by a local copy
of the same size) and the four collectives alone, each the slowest rank's median over back-to-back runs.

    python3 benchmarks/peers/tp_layer.py --nproc 2 [--transport host] [--seq 4096 --hidden 4096 --heads 32 --head-dim 128 --ffn 11008]

--transport host sets NCCL_P2P_DISABLE=1 (through host memory, the path WebGPU has); nvlink (default)
leaves NCCL its GPU-to-GPU path. Inputs are randn-scaled like ours (weights by 1/sqrt(fan-in)).
"""
from __future__ import annotations

import argparse
import os
import sys

import peerlib


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--transport", choices=("nvlink", "host"), default="nvlink")
    p.add_argument("--seq", type=int, default=4096)
    p.add_argument("--hidden", type=int, default=4096)
    p.add_argument("--heads", type=int, default=32)
    p.add_argument("--head-dim", type=int, default=128)
    p.add_argument("--ffn", type=int, default=11008)
    p.add_argument("--dtype", default="f16")
    p.add_argument("--nproc", type=int, default=2)
    peerlib.add_common_args(p, warmup=5, runs=20)
    a = p.parse_args(argv)
    a.dtype = peerlib.dtype_name(a.dtype)
    return a


def worker(local_rank: int, world_size: int, a: argparse.Namespace) -> None:
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F

    device = peerlib.init_distributed(torch, local_rank, world_size, a.cpu)
    rank = dist.get_rank()
    dtype = getattr(torch, a.dtype)
    R, S, H, Fd = world_size, a.seq, a.hidden, a.ffn
    heads, d = a.heads // R, a.head_dim
    Hr, Fr = heads * d, Fd // R
    g = torch.Generator(device="cpu").manual_seed(1 + rank)
    w = lambda rows, cols: (torch.randn(rows, cols, generator=g) / rows ** 0.5).to(device=device, dtype=dtype)  # noqa: E731
    x = torch.randn(S // R, H, generator=g).to(device=device, dtype=dtype)
    gamma1, gamma2 = torch.ones(H, device=device, dtype=dtype), torch.ones(H, device=device, dtype=dtype)
    wqkv, wo, wgu, wd = w(H, 3 * Hr), w(Hr, H), w(H, 2 * Fr), w(Fr, H)

    def rms(t, gamma):
        return (t.float() * torch.rsqrt(t.float().pow(2).mean(-1, keepdim=True) + 1e-6)).to(dtype) * gamma

    def gather(t, comm):
        out = torch.empty(S, t.shape[1], device=device, dtype=dtype)
        if comm:
            dist.all_gather_into_tensor(out, t)
        else:
            out[: t.shape[0]].copy_(t)
        return out

    def scatter(t, comm):
        out = torch.empty(S // R, t.shape[1], device=device, dtype=dtype)
        if comm:
            dist.reduce_scatter_tensor(out, t)
        else:
            out.copy_(t[: S // R])
        return out

    def layer(comm=True):
        xn = gather(rms(x, gamma1), comm)
        q, k, v = (xn @ wqkv).split(Hr, dim=1)
        shape = lambda t: t.view(S, heads, d).transpose(0, 1)  # noqa: E731
        o = F.scaled_dot_product_attention(shape(q), shape(k), shape(v), is_causal=True).transpose(0, 1).reshape(S, Hr)
        x1 = x + scatter(o @ wo, comm)
        gate, up = (gather(rms(x1, gamma2), comm) @ wgu).split(Fr, dim=1)
        return x1 + scatter((F.silu(gate) * up) @ wd, comm)

    a_in = torch.empty(S // R, H, device=device, dtype=dtype)
    s_in = torch.empty(S, H, device=device, dtype=dtype)

    def collectives():
        for _ in range(2):
            gather(a_in, True)
            scatter(s_in, True)

    timer = peerlib.Timer(torch, cpu=a.cpu)
    record = {"peer": "pytorch", "what": "tp-layer", "transport": a.transport, "ranks": R, "seq": S, "hidden": H, "heads": a.heads,
              "head_dim": d, "ffn": Fd, "dtype": a.dtype, **peerlib.platform_record(torch, local_rank, cpu=a.cpu)}
    try:
        for name, fn in (("layer", layer), ("compute_alone", lambda: layer(False)), ("collectives_alone", collectives)):
            peerlib.barrier(torch, device)
            record[name + "_ms"] = peerlib.summarize(peerlib.slowest_rank(torch, timer.run(fn, a.warmup, a.runs), device))
        if rank == 0:
            peerlib.emit(record)
    finally:
        dist.destroy_process_group()


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    peerlib.keep_multicast_off()
    if a.transport == "host":
        os.environ["NCCL_P2P_DISABLE"] = "1"
        os.environ["NCCL_SHM_DISABLE"] = "0"
    if a.dry_run:
        peerlib.emit(peerlib.dry_run_record("tp-layer", {"ranks": a.nproc, "transport": a.transport}))
        return 0
    peerlib.launch(worker, a, a.nproc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
