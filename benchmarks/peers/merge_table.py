"""Merges our benchmark JSON with the peers' JSON lines into one Markdown table per comparison:

  GEMM            our GEMM TFLOP/s next to cuBLAS's (same size and dtype)
  fused           per workload, our speedup of fused over sequential next to PyTorch's speedup of
                  async tensor parallelism over sequential (same workload, ranks, per-rank shape, dtype)
  moving bytes    our peer-copy GB/s next to NCCL's all-gather through host memory (bus bandwidth), the
                  pinned-host copies of host_copy.py, and NCCL over NVLink for reference

each with the ratio and the device named (devices are numbered under each table).

    python3 benchmarks/peers/merge_table.py RESULTS.json PEERS.jsonl [...] [--out TABLE.md]

Files may be our results.json ({"adapter", "results": [...]}), a JSON list, or JSON lines (lines that
are not JSON objects are skipped, so a captured stdout will do). A record with a "peer" field is a peer's;
any other is ours. Our records are read tolerantly, as the harness grows: the workload from "workload"
or "kind"; timings from "ms" (a number, or an object with "median"); variants from a "variants" object
({"sequential": ..., "fused": ...}), a "variant" string, or else the record is the fused kernel (a
non-empty "variant" object is an ablation and is left out).
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from typing import Any, Iterable

WORKLOADS_WITH_PEERS = ("ag-gemm", "gemm-rs")
DTYPES = {"f32": "f32", "fp32": "f32", "float": "f32", "float32": "f32", "f16": "f16", "fp16": "f16",
          "half": "f16", "float16": "f16", "bf16": "bf16", "bfloat16": "bf16"}
DTYPE_ORDER = {"f32": 0, "f16": 1, "bf16": 2}
DASH = "—"


# --- reading -----------------------------------------------------------------------------------------


def read_records(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        return flatten(json.loads(text))
    except json.JSONDecodeError:
        pass
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            doc = json.loads(line)
        except json.JSONDecodeError:
            continue
        out.extend(flatten(doc))
    return out


def flatten(doc: Any, context: dict | None = None) -> list[dict]:
    """Records out of a document: a list, an object with a list of results, or a record itself.
    Device fields of an enclosing object (adapter, device, devices) are copied into its records."""
    context = dict(context or {})
    if isinstance(doc, list):
        return [r for d in doc for r in flatten(d, context)]
    if not isinstance(doc, dict):
        return []
    for key in ("results", "records", "benchmarks", "runs"):
        if isinstance(doc.get(key), list):
            ctx = {**context, **{k: doc[k] for k in ("adapter", "device", "devices") if k in doc and not isinstance(doc[k], (list, dict))}}
            return flatten(doc[key], ctx)
    return [{**context, **doc}]


def dtype_of(value: Any, default: str = "f32") -> str:
    if value is None:
        return default
    return DTYPES.get(str(value).lower().removeprefix("torch."), str(value))


def median_ms(value: Any) -> float | None:
    """A number, or the median of a summary object ({"median": ...}, {"ms": {...}}, ...)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, dict):
        for key in ("median", "ms", "medianMs", "median_ms", "p50"):
            if key in value:
                got = median_ms(value[key])
                if got is not None:
                    return got
    return None


def shape_of(rec: dict) -> tuple[int, int, int] | None:
    s = rec.get("shape")
    if isinstance(s, dict) and all(k in s for k in "mnk"):
        return int(s["m"]), int(s["n"]), int(s["k"])
    if isinstance(s, list) and len(s) == 3:
        return int(s[0]), int(s[1]), int(s[2])
    if all(k in rec for k in "mnk"):
        return int(rec["m"]), int(rec["n"]), int(rec["k"])
    if isinstance(rec.get("size"), int):
        n = rec["size"]
        return n, n, n
    return None


def first(rec: dict, *keys: str) -> Any:
    for k in keys:
        if rec.get(k) is not None:
            return rec[k]
    return None


# --- what the tables hold ----------------------------------------------------------------------------


@dataclass
class Gemm:
    tflops: float
    label: str
    device: str


@dataclass
class Workload:
    device: str
    variants: dict[str, float] = field(default_factory=dict)
    note: str = ""

    def speedup(self, overlapped: str) -> float | None:
        seq, other = self.variants.get("sequential"), self.variants.get(overlapped)
        return seq / other if seq and other else None


@dataclass
class Tables:
    our_gemm: dict[tuple, Gemm] = field(default_factory=dict)
    cublas: dict[tuple, Gemm] = field(default_factory=dict)
    our_workloads: dict[tuple, Workload] = field(default_factory=dict)
    async_tp: dict[tuple, Workload] = field(default_factory=dict)
    our_copy: dict[int, tuple[float, str]] = field(default_factory=dict)
    nccl: dict[tuple, tuple[float, str]] = field(default_factory=dict)
    host_copy: dict[tuple, tuple[float, str]] = field(default_factory=dict)


def our_device(rec: dict) -> str:
    name = first(rec, "adapter", "device") or "our device (not named in the JSON)"
    devices = rec.get("devices")
    return f"{name} ({devices} devices)" if isinstance(devices, int) and devices > 1 else str(name)


def peer_device(rec: dict) -> str:
    name = rec.get("device") or "peer device (not named)"
    versions = ", ".join(f"{k} {rec[k]}" for k in ("torch", "nccl") if rec.get(k))
    return f"{name} ({versions})" if versions else str(name)


def workload_variants(rec: dict) -> dict[str, float] | None:
    """The variants a record of ours times, or None for an ablation."""
    if isinstance(rec.get("variants"), dict):
        out = {}
        for name, v in rec["variants"].items():
            ms = median_ms(v.get("ms", v) if isinstance(v, dict) else v)
            if ms is not None:
                out[str(name)] = ms
        return out
    ms = median_ms(rec.get("ms"))
    variant = rec.get("variant")
    if isinstance(variant, str):
        return {variant: ms} if ms is not None else {}
    if isinstance(variant, dict) and variant:
        return None
    return {"fused": ms} if ms is not None else {}


def is_copy_kind(kind: Any) -> bool:
    return isinstance(kind, str) and kind.replace("_", "-").lower() in ("peer-copy", "peercopy", "copy", "peer-copy-bandwidth")


def copy_bandwidth(rec: dict) -> tuple[int, float] | None:
    nbytes = first(rec, "bytes", "sizeBytes", "size_bytes", "chunkBytes", "chunk_bytes", "size")
    if not isinstance(nbytes, (int, float)):
        return None
    gbps = first(rec, "gbps", "GBps", "gbPerS", "gb_per_s", "bandwidthGBps", "bandwidth_gbps")
    if gbps is None:
        ms = median_ms(rec.get("ms"))
        if not ms:
            return None
        gbps = nbytes / (ms * 1e-3) / 1e9
    return int(nbytes), float(gbps)


def collect(ours: Iterable[dict], peers: Iterable[dict]) -> Tables:
    t = Tables()
    for rec in ours:
        kind = first(rec, "workload", "kind")
        if kind == "gemm":
            shape = shape_of(rec)
            ms = median_ms(rec.get("ms"))
            tflops = rec.get("tflops") or (2 * shape[0] * shape[1] * shape[2] / (ms * 1e-3) / 1e12 if shape and ms else None)
            if not shape or not tflops or shape[0] != shape[1] or shape[1] != shape[2]:
                continue
            block = rec.get("block")
            label = "x".join(str(block[k]) for k in "mnk") + " tiles" if isinstance(block, dict) and all(k in block for k in "mnk") else ""
            if rec.get("path") or rec.get("impl"):
                label = f"{first(rec, 'path', 'impl')}, {label}" if label else str(first(rec, "path", "impl"))
            key = (shape[0], dtype_of(rec.get("dtype")))
            if key not in t.our_gemm or tflops > t.our_gemm[key].tflops:
                t.our_gemm[key] = Gemm(float(tflops), label, our_device(rec))
        elif is_copy_kind(kind):
            got = copy_bandwidth(rec)
            if got and got[0] not in t.our_copy:
                t.our_copy[got[0]] = (got[1], our_device(rec))
        elif isinstance(kind, str) and rec.get("kind") != "verify":
            shape, variants = shape_of(rec), workload_variants(rec)
            if shape is None or not variants or not isinstance(rec.get("ranks"), int):
                continue
            key = (kind, rec["ranks"], shape, dtype_of(rec.get("dtype")))
            entry = t.our_workloads.setdefault(key, Workload(our_device(rec)))
            for name, ms in variants.items():
                entry.variants.setdefault(name, ms)
    for rec in peers:
        if rec.get("dry_run"):
            continue
        peer = rec.get("peer")
        if peer == "cublas":
            shape = shape_of(rec)
            ms = median_ms(rec.get("ms"))
            tflops = rec.get("tflops") or (2 * shape[0] * shape[1] * shape[2] / (ms * 1e-3) / 1e12 if shape and ms else None)
            if shape and tflops:
                key = (shape[0], dtype_of(rec.get("dtype")))
                if key not in t.cublas:
                    t.cublas[key] = Gemm(float(tflops), "", peer_device(rec))
        elif peer == "async-tp":
            shape = shape_of(rec)
            if shape is None or rec.get("workload") is None:
                continue
            key = (rec["workload"], rec.get("ranks"), shape, dtype_of(rec.get("dtype")))
            entry = t.async_tp.setdefault(key, Workload(peer_device(rec)))
            variant = rec.get("variant")
            if rec.get("supported") is False:
                entry.note = str(rec.get("reason") or "unsupported")
            ms = median_ms(rec.get("ms"))
            if isinstance(variant, str) and ms is not None:
                entry.variants.setdefault(variant, ms)
        elif peer == "nccl":
            nbytes = rec.get("bytes_per_rank") or (rec.get("bytes", 0) // max(rec.get("ranks", 2), 1))
            if rec.get("busbw_gbps") is not None and nbytes:
                key = (rec.get("op"), rec.get("transport"), int(nbytes))
                t.nccl.setdefault(key, (float(rec["busbw_gbps"]), peer_device(rec)))
        elif peer == "host-copy":
            if rec.get("gbps") is not None and rec.get("bytes"):
                t.host_copy.setdefault((rec.get("method"), int(rec["bytes"])), (float(rec["gbps"]), peer_device(rec)))
    return t


# --- writing -----------------------------------------------------------------------------------------


def fmt(x: float | None, digits: int = 1) -> str:
    if x is None:
        return DASH
    if digits == 1 and abs(x) < 10:
        return f"{x:.2f}"
    return f"{x:.{digits}f}"


def ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}" if a is not None and b else DASH


def size_label(nbytes: int) -> str:
    if nbytes % (1 << 30) == 0:
        return f"{nbytes >> 30} GiB"
    if nbytes % (1 << 20) == 0:
        return f"{nbytes >> 20} MiB"
    if nbytes % (1 << 10) == 0:
        return f"{nbytes >> 10} KiB"
    return f"{nbytes} B"


class DeviceNotes:
    """Devices numbered in the order a table first names them, listed under it."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def ref(self, name: str | None) -> str:
        if name is None:
            return DASH
        if name not in self.names:
            self.names.append(name)
        return f"[{self.names.index(name) + 1}]"

    def refs(self, *names: str | None) -> str:
        return " / ".join(self.ref(n) for n in names if n is not None) or DASH

    def lines(self) -> list[str]:
        return [f"[{i + 1}] {n}" for i, n in enumerate(self.names)]


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def devices_footer(notes: DeviceNotes) -> list[str]:
    return ["", "Devices: " + "; ".join(notes.lines())] if notes.names else []


def gemm_section(t: Tables) -> list[str]:
    keys = sorted(set(t.our_gemm) | set(t.cublas), key=lambda k: (k[0], DTYPE_ORDER.get(k[1], 9), k[1]))
    if not keys:
        return []
    notes, rows = DeviceNotes(), []
    for size, dtype in keys:
        ours, peer = t.our_gemm.get((size, dtype)), t.cublas.get((size, dtype))
        rows.append([
            f"{size}³", dtype,
            f"{fmt(ours.tflops)} ({ours.label})" if ours and ours.label else fmt(ours.tflops if ours else None),
            fmt(peer.tflops if peer else None),
            ratio(ours.tflops if ours else None, peer.tflops if peer else None),
            notes.refs(ours.device if ours else None, peer.device if peer else None),
        ])
    return ["### GEMM: ours against cuBLAS", "",
            *table(["size", "dtype", "ours TFLOP/s (best tiles)", "cuBLAS TFLOP/s", "ours / cuBLAS", "devices (ours / cuBLAS)"], rows),
            *devices_footer(notes),
            "", "f32 is f32 on both sides (cuBLAS with TF32 off). Medians of back-to-back launches."]


def fused_section(t: Tables) -> list[str]:
    ours = {k: v for k, v in t.our_workloads.items() if k[0] in WORKLOADS_WITH_PEERS}
    peer_groups = {k[:3] for k in t.async_tp}
    keys = set(t.async_tp)
    # Ours alone only where it has both variants, or where PyTorch ran the same workload, ranks and shape.
    keys |= {k for k, v in ours.items() if k[:3] in peer_groups or v.speedup("fused") is not None}
    if not keys:
        return []
    notes, rows, unsupported = DeviceNotes(), [], {}

    def cell(w: Workload | None, overlapped: str) -> str:
        if w is None:
            return DASH
        seq, other = w.variants.get("sequential"), w.variants.get(overlapped)
        if seq is None and other is None:
            return DASH
        return f"{fmt(seq, 3) if seq is not None else DASH} → {fmt(other, 3) if other is not None else DASH}"

    for key in sorted(keys, key=lambda k: (k[0], k[1] or 0, k[2], DTYPE_ORDER.get(k[3], 9))):
        workload, ranks, (m, n, k), dtype = key
        o, p = ours.get(key), t.async_tp.get(key)
        so = o.speedup("fused") if o else None
        sp = p.speedup("async_tp") if p else None
        if p and p.note and "async_tp" not in p.variants:
            reason = p.note.removeprefix("skipped after a failure: ")
            unsupported.setdefault(reason[:240], []).append(f"{workload} {m}x{n}x{k} {dtype}")
        rows.append([
            workload, str(ranks), f"{m}x{n}x{k}", dtype,
            cell(o, "fused"), fmt(so, 2) if so else DASH,
            cell(p, "async_tp"), fmt(sp, 2) if sp else (("unsupported" if p and p.note else DASH)),
            ratio(so, sp),
            notes.refs(o.device if o else None, p.device if p else None),
        ])
    out = ["### Fused against sequential: ours and PyTorch's async tensor parallelism", "",
           *table(["workload", "ranks", "shape per rank (MxNxK)", "dtype", "ours: sequential → fused ms", "ours speedup",
                   "PyTorch: sequential → async-TP ms", "PyTorch speedup", "ours / PyTorch (speedups)", "devices (ours / PyTorch)"], rows),
           *devices_footer(notes),
           "", "Speedup = sequential ÷ overlapped median time (above 1: the overlapped run is faster). PyTorch's sequential "
           "run is NCCL's collective then cuBLAS; its async-TP run is torch.ops.symm_mem.fused_all_gather_matmul / "
           "fused_matmul_reduce_scatter. Ours runs ranks on the devices named (several ranks may share one GPU)."]
    if unsupported:
        out += ["", "PyTorch async-TP not measured:", *[f"- {', '.join(where)}: {why}" for why, where in unsupported.items()]]
    return out


def copy_section(t: Tables) -> list[str]:
    sizes = set(t.our_copy) | {k[2] for k in t.nccl if k[0] == "all_gather"} | {k[1] for k in t.host_copy}
    if not sizes:
        return []
    notes, rows = DeviceNotes(), []
    for nbytes in sorted(sizes):
        ours = t.our_copy.get(nbytes)
        host = t.nccl.get(("all_gather", "host", nbytes))
        nvlink = t.nccl.get(("all_gather", "nvlink", nbytes))
        serial = t.host_copy.get(("pinned-serial", nbytes))
        piped = t.host_copy.get(("pinned-pipelined", nbytes))
        g = lambda x: x[0] if x else None  # noqa: E731
        rows.append([
            size_label(nbytes), fmt(g(ours)),
            fmt(g(host)), ratio(g(ours), g(host)),
            fmt(g(serial)), ratio(g(ours), g(serial)),
            fmt(g(piped)), ratio(g(ours), g(piped)),
            fmt(g(nvlink)),
            notes.refs(*[x[1] for x in (ours, host or serial or piped or nvlink) if x]),
        ])
    return ["### Moving bytes between GPUs: our peer-copy against NCCL and CUDA through the host", "",
            *table(["bytes", "ours peer-copy GB/s", "NCCL all-gather via host, bus GB/s", "ours / NCCL host",
                    "pinned copy GB/s", "ours / pinned", "pinned pipelined GB/s", "ours / pipelined",
                    "NCCL all-gather NVLink, bus GB/s", "devices (ours / peers)"], rows),
            *devices_footer(notes),
            "", "GB/s are 1e9 bytes per second. NCCL rows are matched by the bytes each rank sends (bytes_per_rank); "
            "bus bandwidth as nccl-tests defines it (at 2 ranks: bytes received by one rank over the time). "
            "'via host' is NCCL_P2P_DISABLE=1, NCCL_SHM_DISABLE=0; pinned copies are GPU → pinned host → GPU "
            "(host_copy.py). WebGPU cannot reach NVLink: that column is for reference only."]


def render(t: Tables) -> str:
    sections = [s for s in (gemm_section(t), fused_section(t), copy_section(t)) if s]
    if not sections:
        return "No comparable records found.\n"
    return "\n\n".join("\n".join(s) for s in sections) + "\n"


def split(records: Iterable[dict]) -> tuple[list[dict], list[dict]]:
    ours, peers = [], []
    for r in records:
        (peers if "peer" in r else ours).append(r)
    return ours, peers


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    p.add_argument("files", nargs="*", help="JSON or JSON-lines files, ours and the peers', in any order")
    p.add_argument("--ours", action="append", default=[], help="a file of ours (records without 'peer')")
    p.add_argument("--peers", action="append", default=[], help="a file of the peers' JSON lines")
    p.add_argument("--out", help="write the Markdown here as well as to stdout")
    a = p.parse_args(argv)
    if not (a.files or a.ours or a.peers):
        p.error("give at least one file")
    records: list[dict] = []
    for path in [*a.ours, *a.files, *a.peers]:
        records.extend(read_records(path))
    ours, peers = split(records)
    text = render(collect(ours, peers))
    sys.stdout.write(text)
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
