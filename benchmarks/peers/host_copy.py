"""GPU-to-GPU copies through pinned host memory, the CUDA counterpart of our WebGPU peer-copy backend
(GPU -> host staging -> GPU), per size from 1 MiB to 256 MiB; one JSON line per size and method.

    python3 benchmarks/peers/host_copy.py [--src 0 --dst 1] [--min-mib 1 --max-mib 256] [--chunk-mib 4]

Methods:
  pinned-serial     the whole buffer GPU src -> pinned host buffer, then host -> GPU dst (as
                    `x.to('cpu')` into pinned memory then `.to('cuda:1')`, without allocating per copy)
  pinned-pipelined  the same in chunks of --chunk-mib, the host-to-GPU copy of chunk c overlapping the
                    GPU-to-host copy of chunk c+1 (our peer-copy pipelines chunks the same way)
  device-to-device  `dst.copy_(src)`: CUDA's peer copy over NVLink (or PCIe), which WebGPU cannot reach;
                    only where src != dst

With one GPU, src and dst default to 0: GPU0 -> host -> GPU0, the path our peer-copy takes between two
WebGPU devices opened on the same GPU. Each copy runs back to back between CUDA events on the source
GPU (the destination's last copy is waited for from the source stream); the wall clock over all timed
copies is recorded too (wall_ms_mean).
"""
from __future__ import annotations

import argparse
import sys
import time

import peerlib


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 2)[2])
    p.add_argument("--src", type=int, default=0, help="source GPU (default 0)")
    p.add_argument("--dst", type=int, default=None, help="destination GPU (default 1 where there are two GPUs, else 0)")
    p.add_argument("--min-mib", type=int, default=1)
    p.add_argument("--max-mib", type=int, default=256)
    p.add_argument("--chunk-mib", type=int, default=4, help="chunk of the pipelined copy (default 4 MiB)")
    p.add_argument("--methods", nargs="+", default=["pinned-serial", "pinned-pipelined", "device-to-device"],
                   choices=["pinned-serial", "pinned-pipelined", "device-to-device"])
    peerlib.add_common_args(p, warmup=3, runs=20)
    a = p.parse_args(argv)
    a.sizes = peerlib.powers_of_two_mib(a.min_mib, a.max_mib)
    return a


def plan(a: argparse.Namespace, dst: int) -> list[dict]:
    methods = [m for m in a.methods if m != "device-to-device" or a.src != dst]
    return [{"bytes": n, "method": m} for n in a.sizes for m in methods]


class Copier:
    """The three copies, each enqueued without a host round trip. Streams of their own on both GPUs
    (distinct even when src == dst, so the two directions can overlap in the pipelined copy)."""

    def __init__(self, torch, src_dev, dst_dev, nbytes: int, chunk: int, cpu: bool):
        self.torch, self.cpu = torch, cpu
        self.src = torch.ones(nbytes, dtype=torch.uint8, device=src_dev)
        self.dst = torch.zeros(nbytes, dtype=torch.uint8, device=dst_dev)
        self.host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=not cpu)
        self.chunks = [(o, min(chunk, nbytes - o)) for o in range(0, nbytes, chunk)]
        if not cpu:
            self.s_src = torch.cuda.Stream(device=src_dev)
            self.s_dst = torch.cuda.Stream(device=dst_dev)
            self.arrived = [torch.cuda.Event() for _ in self.chunks]  # a chunk is on the host
            self.done = torch.cuda.Event()  # the destination has it all

    def _finish_on_src(self) -> None:
        # The launch is timed on the source GPU: its stream waits for the destination's last copy.
        self.done.record(self.s_dst)
        self.s_src.wait_event(self.done)

    def serial(self) -> None:
        if self.cpu:
            self.host.copy_(self.src)
            self.dst.copy_(self.host)
            return
        t = self.torch
        with t.cuda.stream(self.s_src):
            self.host.copy_(self.src, non_blocking=True)
            self.arrived[0].record(self.s_src)
        self.s_dst.wait_event(self.arrived[0])
        with t.cuda.stream(self.s_dst):
            self.dst.copy_(self.host, non_blocking=True)
        self._finish_on_src()

    def pipelined(self) -> None:
        if self.cpu:
            for o, n in self.chunks:
                self.host[o:o + n].copy_(self.src[o:o + n])
                self.dst[o:o + n].copy_(self.host[o:o + n])
            return
        t = self.torch
        for (o, n), ev in zip(self.chunks, self.arrived):
            with t.cuda.stream(self.s_src):
                self.host[o:o + n].copy_(self.src[o:o + n], non_blocking=True)
                ev.record(self.s_src)
            self.s_dst.wait_event(ev)
            with t.cuda.stream(self.s_dst):
                self.dst[o:o + n].copy_(self.host[o:o + n], non_blocking=True)
        self._finish_on_src()

    def device_to_device(self) -> None:
        if self.cpu:
            self.dst.copy_(self.src)
            return
        with self.torch.cuda.stream(self.s_src):
            self.dst.copy_(self.src, non_blocking=True)

    def check(self) -> bool:
        """Whether the destination holds the source's bytes; clears it for the timed copies."""
        if not self.cpu:
            self.torch.cuda.synchronize(self.src.device)
            self.torch.cuda.synchronize(self.dst.device)
        ok = bool((self.dst == 1).all().item())
        self.dst.zero_()
        if not self.cpu:
            self.torch.cuda.synchronize(self.dst.device)
        return ok


def time_copy(torch, copier: Copier, fn, a: argparse.Namespace) -> tuple[list[float], float]:
    """Per-copy times from events on the source stream, and the wall-clock mean over all timed copies."""
    if a.cpu:
        for _ in range(a.warmup):
            fn()
        times = []
        for _ in range(a.runs):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
        return times, sum(times) / len(times)
    for _ in range(a.warmup):
        fn()
    torch.cuda.synchronize(copier.src.device)
    torch.cuda.synchronize(copier.dst.device)
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(a.runs)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(a.runs)]
    t0 = time.perf_counter()
    for start, end in zip(starts, ends):
        start.record(copier.s_src)
        fn()
        end.record(copier.s_src)
    torch.cuda.synchronize(copier.src.device)
    torch.cuda.synchronize(copier.dst.device)
    wall = (time.perf_counter() - t0) * 1e3 / a.runs
    return [s.elapsed_time(e) for s, e in zip(starts, ends)], wall


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    peerlib.keep_multicast_off()
    if a.dry_run:
        dst = a.dst if a.dst is not None else 1
        for item in plan(a, dst):
            peerlib.emit(peerlib.dry_run_record("host-copy", {**item, "src": a.src, "dst": dst, "chunk_bytes": a.chunk_mib * peerlib.MIB, "warmup": a.warmup, "runs": a.runs}))
        return 0
    import torch

    if a.cpu:
        dst = a.dst if a.dst is not None else 0
        src_dev = dst_dev = torch.device("cpu")
    else:
        dst = a.dst if a.dst is not None else (1 if torch.cuda.device_count() > 1 else 0)
        src_dev, dst_dev = torch.device("cuda", a.src), torch.device("cuda", dst)
        torch.cuda.set_device(src_dev)
    platform = peerlib.platform_record(torch, a.src, cpu=a.cpu)
    if not a.cpu:
        platform["device_dst"] = torch.cuda.get_device_name(dst)
        platform["p2p_access"] = a.src != dst and torch.cuda.can_device_access_peer(a.src, dst)
    chunk = a.chunk_mib * peerlib.MIB
    for nbytes in a.sizes:
        copier = Copier(torch, src_dev, dst_dev, nbytes, chunk, a.cpu)
        fns = {"pinned-serial": copier.serial, "pinned-pipelined": copier.pipelined, "device-to-device": copier.device_to_device}
        for item in plan(a, dst):
            if item["bytes"] != nbytes:
                continue
            method = item["method"]
            fns[method]()
            verified = copier.check()
            times, wall = time_copy(torch, copier, fns[method], a)
            ms = peerlib.summarize(times)
            peerlib.emit({
                "peer": "host-copy",
                "method": method,
                "src": a.src,
                "dst": dst,
                "bytes": nbytes,
                "chunk_bytes": chunk if method == "pinned-pipelined" else None,
                "verified": verified,
                "ms": ms,
                "gbps": peerlib.gbps(nbytes, ms["median"]),
                "wall_ms_mean": wall,
                "wall_gbps": peerlib.gbps(nbytes, wall),
                **platform,
            })
        del copier
    return 0


if __name__ == "__main__":
    sys.exit(main())
