"""Tests of the peer scripts' pure-Python parts, on a machine without torch or a GPU:

    python3 -m unittest discover benchmarks/peers

The last class also runs every script on the CPU (--cpu: gloo, wall clock) where torch is installed,
and is skipped where it is not.
"""
from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import async_tp  # noqa: E402
import cublas_gemm  # noqa: E402
import host_copy  # noqa: E402
import merge_table  # noqa: E402
import nccl_bandwidth  # noqa: E402
import peerlib  # noqa: E402

FIXTURES = HERE / "fixtures"
RESULTS = HERE.parent / "results" / "h100-2026-11-23"
SCRIPTS = ("cublas_gemm.py", "host_copy.py", "nccl_bandwidth.py", "async_tp.py", "merge_table.py")
HAS_TORCH = importlib.util.find_spec("torch") is not None

# Runs a script with `import torch` made to fail, as on a machine without torch.
NO_TORCH = ("import os, runpy, sys; sys.modules['torch'] = None; sys.argv = sys.argv[1:]; "
            "sys.path.insert(0, os.path.dirname(sys.argv[0])); runpy.run_path(sys.argv[0], run_name='__main__')")


def run_without_torch(script: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")}
    e.update(env or {}, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-c", NO_TORCH, str(HERE / script), *args], capture_output=True, text=True, env=e, timeout=60)


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


class PeerlibTest(unittest.TestCase):
    def test_summary_median_matches_our_stats_and_percentiles_interpolate(self):
        s = peerlib.summarize([4.0, 1.0, 3.0, 2.0])
        self.assertEqual(s["median"], 2.5)  # the two middle ones averaged, as benchmarks/src/stats.ts
        self.assertEqual((s["min"], s["max"], s["runs"]), (1.0, 4.0, 4))
        self.assertAlmostEqual(s["p10"], 1.3)
        self.assertAlmostEqual(s["p90"], 3.7)
        self.assertEqual(peerlib.summarize([5.0])["p90"], 5.0)
        s = peerlib.summarize(range(1, 22))
        self.assertEqual((s["median"], s["p10"], s["p90"]), (11, 3, 19))
        with self.assertRaises(ValueError):
            peerlib.summarize([])

    def test_bandwidths(self):
        alg, bus = peerlib.bus_bandwidth("all_gather", 2 * 10**9, 2, 1000.0)
        self.assertAlmostEqual(alg, 2.0)
        self.assertAlmostEqual(bus, 1.0)  # at 2 ranks, half: what one rank receives
        self.assertAlmostEqual(peerlib.bus_bandwidth("reduce_scatter", 8 * 10**9, 8, 1000.0)[1], 7.0)
        with self.assertRaises(ValueError):
            peerlib.bus_bandwidth("all_reduce", 1, 2, 1.0)
        self.assertAlmostEqual(peerlib.gbps(10**9, 100.0), 10.0)
        self.assertAlmostEqual(peerlib.gemm_tflops(4096, 4096, 4096, 2.7101759910583496), 50.71218766805206)

    def test_sizes_are_powers_of_two_from_1_to_256_mib(self):
        sizes = peerlib.powers_of_two_mib(1, 256)
        self.assertEqual(len(sizes), 9)
        self.assertEqual((sizes[0], sizes[-1]), (1 << 20, 256 << 20))
        for bad in ((3, 8), (1, 6), (8, 4), (0, 4)):
            with self.assertRaises(ValueError):
                peerlib.powers_of_two_mib(*bad)

    def test_versions_and_dtypes(self):
        self.assertEqual(peerlib.parse_version("2.11.0+cu130"), (2, 11, 0))
        self.assertEqual(peerlib.parse_version("2.6.0a0+git1234"), (2, 6, 0))
        self.assertEqual(peerlib.parse_version("2.13"), (2, 13))
        self.assertEqual([peerlib.dtype_name(d) for d in ("f32", "F16", "bf16", "torch.bfloat16", "half")],
                         ["float32", "float16", "bfloat16", "bfloat16", "float16"])
        with self.assertRaises(ValueError):
            peerlib.dtype_name("f8")

    def test_nccl_version_from_tuple_or_int(self):
        class Nccl:
            def __init__(self, v):
                self.v = v

            def version(self):
                return self.v

        def fake(v):
            return type("T", (), {"cuda": type("C", (), {"nccl": Nccl(v)})})

        self.assertEqual(peerlib.nccl_version(fake((2, 27, 5))), "2.27.5")
        self.assertEqual(peerlib.nccl_version(fake(21803)), "2.18.3")
        self.assertEqual(peerlib.nccl_version(fake(2708)), "2.7.8")

    def test_multicast_switches_are_set_off_where_missing_and_never_changed(self):
        env = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1"}
        got = peerlib.keep_multicast_off(env)
        self.assertEqual(got, {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"})
        env = {"NCCL_NVLS_ENABLE": "1"}  # someone's explicit choice stays: recorded, not overridden
        self.assertEqual(peerlib.keep_multicast_off(env)["NCCL_NVLS_ENABLE"], "1")
        rec = peerlib.env_record({"NCCL_P2P_DISABLE": "1", "UNRELATED": "x"})
        self.assertEqual(rec["NCCL_P2P_DISABLE"], "1")
        self.assertIsNone(rec["NCCL_NVLS_ENABLE"])
        self.assertNotIn("UNRELATED", rec)

    def test_torchrun_detection(self):
        self.assertTrue(peerlib.launched_by_torchrun({"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "MASTER_ADDR": "x", "MASTER_PORT": "1"}))
        self.assertFalse(peerlib.launched_by_torchrun({"RANK": "0"}))

    def test_emit_writes_one_json_line(self):
        buf = io.StringIO()
        peerlib.emit({"peer": "x", "ms": {"median": 1.0}}, buf)
        self.assertEqual(json.loads(buf.getvalue()), {"peer": "x", "ms": {"median": 1.0}})
        self.assertEqual(buf.getvalue().count("\n"), 1)


class ScriptArgsTest(unittest.TestCase):
    def test_cublas_defaults_and_the_old_command_line(self):
        a = cublas_gemm.parse_args([])
        self.assertEqual((a.sizes, a.dtypes, a.warmup, a.runs, a.init), ([4096, 8192], ["float32", "float16"], 10, 20, "randn"))
        self.assertEqual(cublas_gemm.parse_args(["4096"]).sizes, [4096])  # `cublas_gemm.py 4096`, as before
        self.assertEqual(len(cublas_gemm.plan(a)), 4)

    def test_cublas_irregular_shapes(self):
        a = cublas_gemm.parse_args(["--sizes", "4096", "--shapes", "4000x3000x1000", "--dtypes", "f16"])
        self.assertEqual(cublas_gemm.plan(a), [
            {"size": 4096, "shape": {"m": 4096, "n": 4096, "k": 4096}, "dtype": "float16"},
            {"size": None, "shape": {"m": 4000, "n": 3000, "k": 1000}, "dtype": "float16"},
        ])
        with self.assertRaises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
            cublas_gemm.parse_args(["--shapes", "4000x3000"])

    def test_host_copy_plan_has_no_device_copy_within_one_gpu(self):
        a = host_copy.parse_args([])
        self.assertEqual(len(a.sizes), 9)
        self.assertEqual(len(host_copy.plan(a, dst=1)), 27)
        self.assertEqual({p["method"] for p in host_copy.plan(a, dst=0)}, {"pinned-serial", "pinned-pipelined"})

    def test_nccl_transport(self):
        env = {}
        self.assertEqual(nccl_bandwidth.resolve_transport("host", env), "host")
        self.assertEqual(env, {"NCCL_P2P_DISABLE": "1", "NCCL_SHM_DISABLE": "0"})
        self.assertEqual(nccl_bandwidth.resolve_transport("auto", env), "host")
        self.assertEqual(nccl_bandwidth.resolve_transport("auto", {}), "nvlink")
        self.assertEqual(nccl_bandwidth.resolve_transport("nvlink", {"NCCL_P2P_DISABLE": "0"}), "nvlink")
        with self.assertRaises(SystemExit):
            nccl_bandwidth.resolve_transport("nvlink", {"NCCL_P2P_DISABLE": "1"})

    def test_nccl_plan_sizes_are_per_rank(self):
        a = nccl_bandwidth.parse_args([])
        plan = nccl_bandwidth.plan(a, 2)
        self.assertEqual(len(plan), 18)
        self.assertEqual(plan[0], {"op": "all_gather", "bytes": 2 << 20, "bytes_per_rank": 1 << 20})
        self.assertEqual(plan[-1], {"op": "reduce_scatter", "bytes": 512 << 20, "bytes_per_rank": 256 << 20})

    def test_async_tp_shapes_follow_our_benchmark(self):
        self.assertEqual(async_tp.per_rank_shape("ag-gemm", 4096, 2), {"m": 4096, "n": 2048, "k": 4096})
        self.assertEqual(async_tp.per_rank_shape("gemm-rs", 8192, 2), {"m": 8192, "n": 8192, "k": 4096})
        a = async_tp.parse_args([])
        cfgs = async_tp.configs(a, 2)
        self.assertEqual(len(cfgs), 12)
        self.assertEqual({c["dtype"] for c in cfgs}, {"bfloat16", "float16", "float32"})
        a = async_tp.parse_args(["--shapes", "1024x512x256", "--dtypes", "bf16", "--workloads", "gemm-rs"])
        self.assertEqual(async_tp.configs(a, 2), [{"workload": "gemm-rs", "ranks": 2, "size": None, "shape": {"m": 1024, "n": 512, "k": 256}, "dtype": "bfloat16"}])
        with self.assertRaises(SystemExit):
            async_tp.configs(async_tp.parse_args(["--shapes", "1023x512x256"]), 2)
        self.assertEqual(async_tp.comm_bytes("ag-gemm", {"m": 4096, "n": 2048, "k": 4096}, 2), 4096 * 4096 * 2)
        self.assertEqual(async_tp.comm_bytes("gemm-rs", {"m": 4096, "n": 4096, "k": 2048}, 4), 4096 * 4096 * 4)

    def test_async_tp_version_gate(self):
        self.assertEqual(async_tp.async_tp_version_ok("2.4.1+cu121")[0], False)
        self.assertIn("2.5", async_tp.async_tp_version_ok("2.4.1")[1])
        self.assertEqual(async_tp.async_tp_version_ok("2.11.0+cu130"), (True, None))


class WithoutTorchTest(unittest.TestCase):
    """--help and --dry-run of every script where `import torch` fails."""

    def test_scripts_compile(self):
        import py_compile

        for script in SCRIPTS + ("peerlib.py",):
            with tempfile.TemporaryDirectory() as d:
                py_compile.compile(str(HERE / script), cfile=os.path.join(d, "x.pyc"), doraise=True)

    def test_help(self):
        for script in SCRIPTS:
            r = run_without_torch(script, "--help")
            self.assertEqual(r.returncode, 0, f"{script}: {r.stderr}")
            self.assertIn("usage:", r.stdout)

    def test_dry_runs(self):
        expect = {"cublas_gemm.py": 4, "host_copy.py": 27, "nccl_bandwidth.py": 18, "async_tp.py": 12}
        for script, n in expect.items():
            r = run_without_torch(script, "--dry-run")
            self.assertEqual(r.returncode, 0, f"{script}: {r.stderr}")
            lines = json_lines(r.stdout)
            self.assertEqual(len(lines), n, script)
            self.assertTrue(all(rec["dry_run"] and rec["peer"] for rec in lines))

    def test_nccl_dry_run_records_the_environment(self):
        r = run_without_torch("nccl_bandwidth.py", "--dry-run", "--transport", "host", env={"NCCL_NVLS_ENABLE": "0"})
        rec = json_lines(r.stdout)[0]
        self.assertEqual(rec["transport"], "host")
        self.assertEqual(rec["env"]["NCCL_P2P_DISABLE"], "1")
        self.assertEqual(rec["env"]["NCCL_SHM_DISABLE"], "0")
        self.assertEqual(rec["env"]["NCCL_NVLS_ENABLE"], "0")
        self.assertEqual(rec["env"]["TORCH_SYMM_MEM_DISABLE_MULTICAST"], "1")
        r = run_without_torch("nccl_bandwidth.py", "--dry-run", env={"NCCL_P2P_DISABLE": "1"})
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("NCCL_P2P_DISABLE", r.stderr)

    def test_run_all_dry_run_skips_the_two_gpu_scripts_on_one_gpu(self):
        for gpus, scripts in (("2", {"cublas", "host-copy", "nccl", "async-tp"}), ("1", {"cublas", "host-copy"})):
            with tempfile.TemporaryDirectory() as out:
                env = {**os.environ, "PEERS_DRY_RUN": "1", "PEERS_GPUS": gpus, "PYTHON": sys.executable}
                r = subprocess.run(["bash", str(HERE / "run_all.sh"), out, str(FIXTURES / "ours-results.json")],
                                   capture_output=True, text=True, env=env, timeout=120)
                self.assertEqual(r.returncode, 0, r.stderr)
                recs = [json.loads(line) for line in Path(out, "peers.jsonl").read_text().splitlines()]
                self.assertEqual({rec["peer"] for rec in recs}, scripts)
                self.assertEqual(sorted(os.listdir(out)), ["peers-table.md", "peers.jsonl", "peers.log"])
                if gpus == "1":
                    self.assertIn("need 2 GPUs", Path(out, "peers.log").read_text())
                    self.assertEqual({rec["dst"] for rec in recs if rec["peer"] == "host-copy"}, {0})
                else:
                    nccl = [rec for rec in recs if rec["peer"] == "nccl"]
                    self.assertEqual({rec["transport"] for rec in nccl}, {"nvlink", "host"})
                    self.assertTrue(all(rec["env"]["NCCL_P2P_DISABLE"] == "1" for rec in nccl if rec["transport"] == "host"))


class MergeTableTest(unittest.TestCase):
    def render(self, *files: Path) -> str:
        records = [r for f in files for r in merge_table.read_records(str(f))]
        return merge_table.render(merge_table.collect(*merge_table.split(records)))

    def row(self, text: str, *cells: str) -> str:
        """The one table row that starts with these cells."""
        prefix = "| " + " | ".join(cells) + " |"
        rows = [line for line in text.splitlines() if line.startswith(prefix)]
        self.assertEqual(len(rows), 1, f"{prefix!r} in\n{text}")
        return rows[0]

    def test_fixtures(self):
        text = self.render(FIXTURES / "ours-results.json", FIXTURES / "peers.jsonl")
        # GEMM: our best tiles against cuBLAS, f32 and f16, the device of each named.
        self.assertIn("| 34.4 (128x128x8 tiles) | 55.0 | 0.63 | [1] / [2] |", self.row(text, "4096³", "f32"))
        self.assertIn("| 137.4 (subgroup-matrix, 128x128x32 tiles) | 687.2 | 0.20 |", self.row(text, "4096³", "f16"))
        self.assertIn("| — | 55.0 | — |", self.row(text, "8192³", "f32"))  # the old cublas.jsonl format
        self.assertIn("[1] nvidia test-gpu-a Fixture: 1.0", text)
        self.assertIn("Fixture GPU B (torch 2.11.0+cu130, nccl 2.27.5)", text)
        # Fused: today's records (fused only), tomorrow's (variants), an unsupported async-TP.
        self.assertIn("| — → 4.500 | — | 3.000 → 2.500 | 1.20 | — |", self.row(text, "ag-gemm", "2", "4096x2048x4096", "f32"))
        self.assertIn("| 6.000 → 5.000 | 1.20 | 4.000 → 3.200 | 1.25 | 0.96 |", self.row(text, "gemm-rs", "2", "4096x4096x2048", "f32"))
        self.assertIn("| 0.500 → — | unsupported |", self.row(text, "gemm-rs", "2", "4096x4096x2048", "bf16"))
        self.assertIn("- gemm-rs 4096x4096x2048 bf16: RuntimeError: a fixture's reason", text)
        self.assertIn("(2 devices)", text)
        self.assertNotIn("9.000", text)  # the ablation
        self.assertNotIn("4096x512x4096", text)  # ours alone, fused only, no peer: not a comparison
        # Bytes: ours against NCCL through the host, the pinned copies, NVLink for reference.
        self.assertIn("| 20.0 | 25.0 | 0.80 | 10.0 | 2.00 | 25.0 | 0.80 | 229.0 |", self.row(text, "64 MiB"))
        self.assertIn("| 5.24 |", self.row(text, "1 MiB"))  # GB/s from bytes and the median

    def test_todays_results_and_cublas_lines(self):
        text = self.render(RESULTS / "run1.json", RESULTS / "cublas.jsonl")
        self.assertIn("| 33.4 (128x128x8 tiles) | 50.7 | 0.66 |", self.row(text, "4096³", "f32"))
        self.assertNotIn("Fused against", text)  # no sequential variant and no PyTorch run yet

    def test_tolerant_reading(self):
        self.assertEqual(merge_table.median_ms(2.0), 2.0)
        self.assertEqual(merge_table.median_ms({"median": 3.0, "min": 1}), 3.0)
        self.assertEqual(merge_table.median_ms({"ms": {"median": 4.0}}), 4.0)
        self.assertIsNone(merge_table.median_ms({"mean": 4.0}))
        self.assertIsNone(merge_table.median_ms(True))
        self.assertIsNone(merge_table.workload_variants({"variant": {"order": "row-major"}, "ms": 1.0}))
        self.assertEqual(merge_table.workload_variants({"variant": {}, "ms": {"median": 1.0}}), {"fused": 1.0})
        self.assertEqual(merge_table.workload_variants({"variant": "sequential", "ms": 2.0}), {"sequential": 2.0})
        self.assertEqual(merge_table.workload_variants({"variants": {"sequential": 3.0, "fused": {"ms": {"median": 2.0}}, "x": "?"}}),
                         {"sequential": 3.0, "fused": 2.0})
        self.assertEqual(merge_table.shape_of({"size": 8}), (8, 8, 8))
        self.assertEqual(merge_table.shape_of({"shape": [1, 2, 3]}), (1, 2, 3))
        self.assertEqual(merge_table.dtype_of("torch.bfloat16"), "bf16")
        with tempfile.TemporaryDirectory() as d:
            p = Path(d, "a.json")
            p.write_text(json.dumps([{"kind": "gemm", "size": 64, "ms": 1.0}]))
            self.assertEqual(merge_table.read_records(str(p))[0]["size"], 64)
            p.write_text("")
            self.assertEqual(merge_table.read_records(str(p)), [])
            self.assertEqual(self.render(p), "No comparable records found.\n")

    def test_cli_writes_the_table(self):
        with tempfile.TemporaryDirectory() as d:
            out = Path(d, "t.md")
            r = subprocess.run([sys.executable, str(HERE / "merge_table.py"), "--ours", str(FIXTURES / "ours-results.json"),
                                "--peers", str(FIXTURES / "peers.jsonl"), "--out", str(out)],
                               capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(out.read_text(), r.stdout)
            self.assertIn("### Moving bytes", r.stdout)


@unittest.skipUnless(HAS_TORCH, "torch is not installed here: the CPU run of the scripts is skipped")
class CpuRunTest(unittest.TestCase):
    """Every script end to end on the CPU (gloo, wall clock): the control flow and the records' shape."""

    def run_script(self, script: str, *args: str) -> list[dict]:
        env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")}
        r = subprocess.run([sys.executable, str(HERE / script), "--cpu", "--warmup", "1", "--runs", "3", *args],
                           capture_output=True, text=True, timeout=240, env={**env, "PYTHONDONTWRITEBYTECODE": "1"})
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        return json_lines(r.stdout)

    def check_common(self, rec: dict) -> None:
        for k in ("device", "torch", "env"):
            self.assertIn(k, rec)
        for name in peerlib.MULTICAST_ENV:  # set off where missing, an existing value kept
            self.assertEqual(rec["env"][name], os.environ.get(name, peerlib.MULTICAST_OFF[name]))
        if "ms" in rec:
            self.assertLessEqual(rec["ms"]["p10"], rec["ms"]["median"])
            self.assertLessEqual(rec["ms"]["median"], rec["ms"]["p90"])

    def test_cublas(self):
        recs = self.run_script("cublas_gemm.py", "--sizes", "64", "--dtypes", "f32", "bf16")
        self.assertEqual([(r["size"], r["dtype"]) for r in recs], [(64, "float32"), (64, "bfloat16")])
        self.assertIs(recs[0]["tf32"], False)
        for r in recs:
            self.check_common(r)

    def test_host_copy(self):
        recs = self.run_script("host_copy.py", "--max-mib", "2", "--chunk-mib", "1")
        self.assertEqual(len(recs), 4)
        self.assertTrue(all(r["verified"] for r in recs))

    def test_nccl_spawned(self):
        recs = self.run_script("nccl_bandwidth.py", "--max-mib", "2", "--transport", "host")
        self.assertEqual([(r["op"], r["bytes_per_rank"]) for r in recs],
                         [("all_gather", 1 << 20), ("all_gather", 2 << 20), ("reduce_scatter", 1 << 20), ("reduce_scatter", 2 << 20)])
        self.assertTrue(all(r["verified"] and r["env"]["NCCL_P2P_DISABLE"] == "1" for r in recs))
        for r in recs:
            self.check_common(r)

    def test_async_tp_unsupported_on_cpu(self):
        recs = self.run_script("async_tp.py", "--sizes", "64", "--dtypes", "f32")
        variants = [(r["workload"], r["variant"]) for r in recs]
        self.assertEqual(variants[:3], [("ag-gemm", "sequential"), ("ag-gemm", "compute_only"), ("ag-gemm", "comm_only")])
        fused = [r for r in recs if r["variant"] == "async_tp"]
        self.assertEqual(len(fused), 2)
        self.assertTrue(all(r["supported"] is False and r["reason"] for r in fused))

    def test_async_tp_success_path_with_a_stand_in_for_the_fused_ops(self):
        # The fused ops need CUDA; here they are replaced by the sequential path to run what follows them.
        driver = textwrap.dedent(f"""
            import sys
            sys.path.insert(0, {str(HERE)!r})
            import async_tp
            async_tp.prepare_async_tp = lambda torch, dist: ("stand-in", None)
            async_tp.Problem.async_tp = lambda self, group_name: self.sequential().clone()
            if __name__ == "__main__":
                sys.exit(async_tp.main())
        """)
        with tempfile.TemporaryDirectory() as d:
            path = Path(d, "driver.py")
            path.write_text(driver)
            env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")}
            r = subprocess.run([sys.executable, str(path), "--cpu", "--warmup", "1", "--runs", "3", "--sizes", "64", "--dtypes", "f32"],
                               capture_output=True, text=True, timeout=240, env={**env, "PYTHONDONTWRITEBYTECODE": "1"})
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        fused = [rec for rec in json_lines(r.stdout) if rec["variant"] == "async_tp"]
        self.assertEqual(len(fused), 2)
        for rec in fused:
            self.assertIs(rec["supported"], True)
            self.assertEqual(rec["max_rel_diff"], 0.0)
            self.assertGreater(rec["speedup"], 0)
            self.assertIn("overlap_efficiency", rec)


if __name__ == "__main__":
    unittest.main()
