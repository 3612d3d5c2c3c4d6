#!/usr/bin/env python3
"""bench/cuda/report.py's modelled bound takes the datasheet of the GPU the
runs were on: an H100's 3.35 TB/s, an H200's (or any other GPU's) 4.8 TB/s,
the same Hopper FLOP peaks. Checks the bound of a memory-bound and a
FLOP-bound case and the report's header line on both GPUs. No torch, no GPU."""
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "cuda"))
import report  # noqa: E402

failures = []


def check(what, got, want, tol=1e-9):
    if abs(got - want) > tol * max(1.0, abs(want)):
        failures.append(f"{what}: got {got}, want {want}")


def runs(gpu):
    return [{"kind": "run", "gpu": {"name": gpu}}]


h100, h200 = report.datasheet(runs("NVIDIA H100 80GB HBM3")), report.datasheet(runs("NVIDIA H200"))
other = report.datasheet(runs("NVIDIA A100-SXM4-80GB"))
check("H100 bandwidth", h100["hbm_bytes_per_s"], 3.35e12)
check("H200 bandwidth", h200["hbm_bytes_per_s"], 4.8e12)
check("another GPU takes the H200's", other["hbm_bytes_per_s"], 4.8e12)
check("no run takes the H200's", report.datasheet([])["hbm_bytes_per_s"], 4.8e12)
# 3.35 GB of traffic, 1 GFLOP: memory-bound, 1 ms on the H100, 0.698 ms on the H200.
mem = {"flops": 1e9, "io_bytes": 3.35e9, "param_bytes": 0}
check("memory-bound on the H100", report.bound(mem, "fp32", h100)["bound_ms"], 1.0)
check("memory-bound on the H200", report.bound(mem, "fp32", h200)["bound_ms"], 1e3 * 3.35e9 / 4.8e12)
# 6.7 GFLOP, 1 MB: FLOP-bound, 0.1 ms in fp32 on either.
flop = {"flops": 6.7e9, "io_bytes": 1e6, "param_bytes": 0}
for name, sheet in (("H100", h100), ("H200", h200)):
    b = report.bound(flop, "fp32", sheet)
    check(f"FLOP-bound fp32 on the {name}", b["bound_ms"], 0.1)
    if b["bound_by"] != "compute":
        failures.append(f"FLOP-bound case on the {name} is {b['bound_by']}-bound")
line = [x for x in report.header(runs("NVIDIA H100 80GB HBM3"), {}) if x.startswith("- % of bound")]
if not line or "3.35 TB/s" not in line[0] or "H100 SXM5" not in line[0]:
    failures.append(f"H100 header does not name its datasheet: {line}")
for f in failures:
    print(f)
sys.exit(1 if failures else 0)
