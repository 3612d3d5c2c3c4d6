#!/usr/bin/env python3
"""Issue 7 evaluation, part 2: measured latency on the host CPU of the plans
`rl`, `greedy` and `beam:8` make for the x86-64 profile, each timed by
`cagr bench --target cpu` (the CPU backend, fp32, same synthesized inputs)
against the unoptimized plan in the same process. Writes Markdown and JSON.

  python3 bench/rl/cpu.py [--cagr build/cagr] [--policy policies/default.rlp]
                          [--models a,b] [--batch 256] [--seconds 2] [--threads 2]
                          [--md bench/results/rl_cpu.md] [--json bench/results/rl_cpu.json]
"""
import argparse
import json
import os
import platform as host
import subprocess
import sys

POLICIES = ["greedy", "beam:8", "rl"]


def bench(a, model, policy):
    name = f"rl:{a.policy}" if policy == "rl" else policy
    cmd = [a.cagr, "bench", f"zoo/onnx/{model}.dynamo.onnx", "--target", "cpu", "--policy", name, "--batch",
           str(a.batch), "--seconds", str(a.seconds), "--threads", str(a.threads), "--json"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{model} {policy}: {p.stderr.strip()}")
    j = json.loads(p.stdout)
    return {k: j[k] for k in ("latency_ms", "spread_pct", "baseline_latency_ms", "baseline_spread_pct",
                              "modelled_latency_ms", "optimize_seconds", "max_abs_diff_vs_unoptimized")} | {
        "decisions": len(j["decisions"])}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cagr", default="build/cagr")
    ap.add_argument("--policy", default="policies/default.rlp")
    ap.add_argument("--models", default="dlrm_criteo,deepfm,xdeepfm,dcnv2,wide_deep,autoint,ngcf")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--seconds", type=float, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--md", default="bench/results/rl_cpu.md")
    ap.add_argument("--json", default="bench/results/rl_cpu.json")
    a = ap.parse_args()
    rows = []
    for model in a.models.split(","):
        row = {"model": model, **{p: bench(a, model, p) for p in POLICIES}}
        rows.append(row)
        print(model, " ".join(f"{p}={row[p]['latency_ms']:.3f}ms" for p in POLICIES), flush=True)
    lines = [f"# `rl` vs `greedy` vs `beam(8)` plans on the host CPU (batch {a.batch}, {a.threads} thread(s))", "",
             "All latencies **measured** on this host by `cagr bench --target cpu` (CPU backend, fp32): median "
             "over at least " + f"{a.seconds:g} s of runs per plan, each policy's plan and the unoptimized plan "
             "timed in the same process on the same synthesized inputs; p90/p10 spread in percent. Plans are made "
             "for the built-in x86-64 datasheet profile (modelled), which is a generic stand-in, not this host. "
             f"Host: {host.machine()}, {os.cpu_count()} vCPU, shared with other builds while this ran, so the "
             "spreads are wide and differences under ~10% are noise. autoint and ngcf are outside the policy's "
             "training set.", "",
             f"Command: `python3 bench/rl/cpu.py --cagr {a.cagr} --policy {a.policy} --batch {a.batch} "
             f"--seconds {a.seconds:g} --threads {a.threads}`", "",
             "| model | unoptimized ms (median of the 3 runs) | greedy ms | beam(8) ms | rl ms | rl / greedy | "
             "rl / beam | spread greedy / beam / rl | max abs diff vs unoptimized (rl) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        base = sorted(r[p]["baseline_latency_ms"] for p in POLICIES)[1]
        ms = {p: r[p]["latency_ms"] for p in POLICIES}
        lines.append(f"| {r['model']}{'*' if r['model'] in ('autoint', 'ngcf') else ''} | {base:.3f} | "
                     f"{ms['greedy']:.3f} | {ms['beam:8']:.3f} | {ms['rl']:.3f} | {ms['rl'] / ms['greedy']:.2f} | "
                     f"{ms['rl'] / ms['beam:8']:.2f} | " + " / ".join(f"{r[p]['spread_pct']:.0f}%" for p in POLICIES) +
                     f" | {r['rl']['max_abs_diff_vs_unoptimized']:.2g} |")
    with open(a.md, "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(a.json, "w") as f:
        json.dump(rows, f, indent=1)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
