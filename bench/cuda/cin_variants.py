#!/usr/bin/env python3
"""xDeepFM's CIN layers on either kernel and in each variant of the generated
one, measured on one GPU (issue 6: the speed and the peak memory of the tf32
/ bf16 cells). For each model, batch and precision: greedy's plan (`cagr
optimize --hw`), then `cagr bench PLAN --policy none --json --breakdown` once
per variant and round, the variants interleaved so clock drift falls on all
alike. A variant is a set of environment variables the CUDA backend reads:
CAGR_CUDA_CIN=nvrtc|cublaslt runs every CIN layer on that kernel whatever
the plan says; CAGR_CIN_X3_MT / _HSTEP / _STAGES / _SPLIT / _WO shape the
generated step kernel (src/backends/cuda/codegen_cin.cc); CAGR_CUDA_CIN_WG=0|1
and CAGR_CIN_WG_SPLIT the warpgroup one, CAGR_CUDA_CIN_BF16=wmma keeps bf16
layers off it (e.g. --precisions bf16 --variants
"plan:;wg:CAGR_CUDA_CIN=nvrtc;wmma:CAGR_CUDA_CIN=nvrtc,CAGR_CUDA_CIN_BF16=wmma").

  python3 bench/cuda/cin_variants.py --cagr .devbundle/cagr --hw bench/results/hw/h200-probed.json \\
      --batches 256,4096 --precisions fp32,tf32 --out $OUT/cin_variants.md

cuBLASLt's chunk pipeline, e.g.: --precisions tf32,bf16 --variants
"l0:CAGR_CUDA_CIN=cublaslt;l2:CAGR_CUDA_CIN=cublaslt,CAGR_CIN_PIPELINE=2".

Prints one line per run and writes a markdown table (median of the rounds'
medians) with the CIN kernels' time from the breakdown (steps issued one by
one) and the plan's peak device memory. Everything in it is measured on the
GPU it ran on; nothing is modelled.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "zoo"))

DEFAULT_VARIANTS = [
    "plan:",
    "cublaslt:CAGR_CUDA_CIN=cublaslt",
    "nvrtc:CAGR_CUDA_CIN=nvrtc",
    "nvrtc-mt1:CAGR_CUDA_CIN=nvrtc,CAGR_CIN_X3_MT=1",
    "nvrtc-hstep1:CAGR_CUDA_CIN=nvrtc,CAGR_CIN_X3_HSTEP=1",
]


def parse_variant(text):
    """'name:A=1,B=2' -> ('name', {'A': '1', 'B': '2'}); a bad entry exits with its text."""
    name, _, rest = text.partition(":")
    env = {}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if not eq or not key:
            sys.exit(f"cin_variants: variant '{text}': '{item}' is not NAME=value")
        env[key] = value
    if not name:
        sys.exit(f"cin_variants: variant '{text}' has no name")
    return name, env


def cin_ms(breakdown):
    """The CIN steps' time in the optimized plan's breakdown (ms)."""
    rows = breakdown.get("optimized", {}).get("by_kernel", [])
    return sum(r["ms"] for r in rows if "cin[" in r["kernel"])


def run_bench(a, plan, batch, npz, env):
    cmd = [a.cagr, "bench", plan, "--target", "cuda", "--hw", a.hw, "--batch", str(batch), "--policy", "none",
           "--inputs", npz, "--json", "--breakdown"]
    p = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **env})
    if p.returncode != 0:
        return None, (p.stderr or p.stdout).strip().splitlines()[-1:]
    return json.loads(p.stdout), None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cagr", default="build/cagr")
    ap.add_argument("--hw", default="bench/results/hw/h200-probed.json")
    ap.add_argument("--models", default="xdeepfm")
    ap.add_argument("--batches", default="256,4096")
    ap.add_argument("--precisions", default="fp32,tf32")
    ap.add_argument("--variants", default=";".join(DEFAULT_VARIANTS),
                    help="';'-separated name:NAME=value,... (an empty list after ':' is the plan as made)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--out", default="/tmp/cin_variants.md")
    a = ap.parse_args()
    import numpy as np

    import models
    variants = [parse_variant(v) for v in a.variants.split(";") if v]
    tmp = tempfile.mkdtemp(prefix="cin_variants_")
    rows = []
    for model in a.models.split(","):
        for batch in [int(b) for b in a.batches.split(",")]:
            x = models.make_inputs(model, "small", batch, a.seed, multi_hot=1)
            npz = os.path.join(tmp, f"{model}.b{batch}.npz")
            np.savez(npz, **x)
            for prec in a.precisions.split(","):
                plan = os.path.join(tmp, f"{model}.b{batch}.{prec}.cagr")
                onnx = os.path.join(ROOT, "zoo", "onnx", f"{model}.dynamo.onnx")
                p = subprocess.run([a.cagr, "optimize", onnx, "--hw", a.hw, "--batch", str(batch), "--precision",
                                    prec, "-o", plan], capture_output=True, text=True)
                if p.returncode != 0:
                    sys.exit(f"cin_variants: cagr optimize {model} {batch} {prec} failed: {p.stderr.strip()}")
                got = {name: [] for name, _ in variants}
                for rnd in range(a.rounds):
                    for name, env in variants:
                        j, err = run_bench(a, plan, batch, npz, env)
                        if j is None:
                            print(f"{model} {batch} {prec} {name} round {rnd}: failed: {err}", flush=True)
                            continue
                        rec = (j["latency_ms"], j["peak_memory_bytes"] / 1e6, cin_ms(j.get("breakdown", {})))
                        got[name].append(rec)
                        print(f"{model} {batch} {prec} {name} round {rnd}: {rec[0]:.4f} ms, {rec[1]:.1f} MB, "
                              f"CIN steps {rec[2]:.4f} ms", flush=True)
                for name, env in variants:
                    if got[name]:
                        rows.append((model, batch, prec, name, env, got[name]))
    lines = ["# CIN kernels and variants (measured)", "",
             f"Command: `python3 bench/cuda/cin_variants.py --cagr {a.cagr} --hw {a.hw} --models {a.models} "
             f"--batches {a.batches} --precisions {a.precisions} --rounds {a.rounds}`", "",
             "| model | batch | precision | variant | environment | median ms (rounds) | peak MB | CIN steps ms |",
             "|---|---:|---|---|---|---|---:|---:|"]
    for model, batch, prec, name, env, recs in rows:
        ms = " / ".join(f"{r[0]:.4f}" for r in recs)
        env_text = ", ".join(f"{k}={v}" for k, v in env.items()) or "(the plan's)"
        lines.append(f"| {model} | {batch} | {prec} | {name} | {env_text} | {ms} | "
                     f"{statistics.median(r[1] for r in recs):.1f} | {statistics.median(r[2] for r in recs):.4f} |")
    with open(a.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
