"""CAGR in the CUDA side-by-side: `cagr bench <onnx> --target cuda --batch N
--json [--precision tf32|bf16]` as a subprocess on the same inputs, its JSON
read defensively (a missing binary, a missing option, a failed run or JSON of
another shape becomes an error string in the record, so the peers are still
reported), and `cagr inspect --json` for the FLOP count of the roofline.
"""
import json
import os
import shlex
import subprocess
import tempfile

import numpy as np

from shared import cagr_options


def _json_in(text):
    """The first JSON object printed on stdout, or None."""
    start = text.find("{")
    if start < 0:
        return None
    try:
        return json.loads(text[start:])
    except ValueError:
        try:
            return json.JSONDecoder().raw_decode(text[start:])[0]
        except ValueError:
            return None


def _num(d, *path):
    for k in path:
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return float(d) if isinstance(d, (int, float)) and not isinstance(d, bool) else None


def _summary(j):
    """The fields the report uses, whatever subset of them this build prints."""
    opt = j.get("optimized") if isinstance(j.get("optimized"), dict) else {}
    out = {"median_ms": _num(j, "latency_ms") or _num(opt, "median_ms"),
           "p10_ms": _num(opt, "p10_ms") or _num(j, "p10_ms"), "p90_ms": _num(opt, "p90_ms") or _num(j, "p90_ms"),
           "spread_pct": _num(j, "spread_pct") or _num(opt, "spread_pct"),
           "repeats": _num(opt, "runs") or _num(j, "runs"),
           "peak_bytes": _num(j, "peak_memory_bytes") or _num(opt, "peak_memory_bytes"),
           "optimize_s": _num(j, "optimize_seconds"), "unoptimized_ms": _num(j, "baseline_latency_ms"),
           "self_check_max_abs_diff": _num(j, "max_abs_diff_vs_unoptimized")}
    # Like for like with the PyTorch engines, whose peak leaves out the inputs
    # made before the engine was built: CAGR's arena holds its inputs, so they
    # are taken off (and kept apart) where the build reports them.
    inputs = _num(j, "peak_memory_breakdown", "arena_input_bytes")
    if out["peak_bytes"] is not None and inputs is not None:
        out["peak_bytes_with_inputs"] = out["peak_bytes"]
        out["peak_bytes"] -= inputs
    if out["spread_pct"] is None and None not in (out["median_ms"], out["p10_ms"], out["p90_ms"]):
        out["spread_pct"] = 100 * (out["p90_ms"] - out["p10_ms"]) / out["median_ms"] if out["median_ms"] else None
    for k in ("latency_kind", "policy", "precision", "target", "profile"):
        if isinstance(j.get(k), str):
            out["cagr_" + k] = j[k]
    for k, v in j.items():  # e.g. NVRTC / compile times of a CUDA build
        if k.endswith(("_seconds", "_s")) and k != "optimize_seconds" and _num(j, k) is not None:
            out["cagr_" + k] = float(v)
    if isinstance(opt.get("kernels"), list):
        out["kernels"] = len(opt["kernels"])
    if isinstance(j.get("decisions"), list):
        out["decisions"] = len(j["decisions"])
    return {k: v for k, v in out.items() if v is not None}


def _command(cagr, onnx, npz, batch, precision, target, helptext, output, extra):
    cmd = [cagr, "bench", onnx, "--target", target, "--batch", str(batch), "--json"]
    if precision != "fp32":
        if "--precision" not in helptext:
            return None, f"`cagr bench` of this build has no --precision option (needed for {precision})"
        cmd += ["--precision", precision]
    for flag, val in (("--inputs", npz), ("--output", output), ("--seconds", "1")):
        if flag in helptext:
            cmd += [flag, val]
    return cmd + shlex.split(extra), None


def run(cagr, onnx, npz, case, target, timeout, extra, errors_fn):
    """One `cagr bench` run -> a record like engines.run_engine's."""
    rec = {"kind": "engine", "model": case.model, "batch": case.batch, "precision": case.precision,
           "engine": "cagr", "device": str(case.device), "ok": False}
    if not os.path.exists(cagr):
        rec["error"] = f"{cagr} not found (build CAGR first)"
        return rec
    helptext = cagr_options(cagr)
    if helptext is None:
        rec["error"] = f"`{cagr} bench` is not available in this build"
        return rec
    with tempfile.TemporaryDirectory(prefix="cagr_cuda_bench_") as tmp:
        output = os.path.join(tmp, "out.npz")
        cmd, err = _command(cagr, onnx, npz, case.batch, case.precision, target, helptext, output, extra)
        if err:
            rec["error"] = err
            return rec
        rec["command"] = " ".join(shlex.quote(c) for c in cmd)
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            rec["error"] = f"timed out after {timeout} s"
            return rec
        j = _json_in(p.stdout)
        if p.returncode != 0 or not isinstance(j, dict):
            tail = (p.stderr.strip() or p.stdout.strip()).splitlines()[-1:] or ["no output"]
            rec["error"] = f"rc {p.returncode}: {tail[0][:300]}"
            return rec
        rec.update(_summary(j))
        if os.path.exists(output):
            with np.load(output) as z:
                if z.files:
                    rec.update(errors_fn(z[z.files[0]], case.ref))
    if rec.get("median_ms") is None:
        rec["error"] = "the JSON of `cagr bench` has no latency_ms"
        return rec
    rec["ok"] = True
    return rec


def inspect_counts(cagr, onnx, batch, pooling):
    """FLOPs and parameter bytes counted by `cagr inspect --json`, or None."""
    if not os.path.exists(cagr):
        return None
    cmd = [cagr, "inspect", onnx, "--batch", str(batch), "--pooling", str(pooling), "--json"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired):
        return None
    tot = (_json_in(p.stdout) or {}).get("totals")
    if p.returncode != 0 or not isinstance(tot, dict) or _num(tot, "flops") is None:
        return None
    return {"flops": _num(tot, "flops"), "param_bytes": _num(tot, "param_bytes"),
            "source": "cagr inspect --json (totals, modelled count)"}
