#!/usr/bin/env python3
"""Issue 7 evaluation, part 3: measured latency on an NVIDIA GPU (the H200)
of the plans `rl`, `greedy` and `beam:8` make, each timed by
`cagr bench --target cuda` (CAGR's CUDA backend: the whole plan captured in
one CUDA graph and replayed, CUDA events, median) against the unoptimized
plan in the same process. Plans are made for the profile `cagr bench` uses
for the GPU (the built-in h200 datasheet profile unless --hw names another:
modelled); every latency in the report is measured on the GPU that ran it.

  python3 bench/rl/cuda.py [--cagr build/cagr] [--policy policies/default.rlp] [--hw PROFILE]
                           [--models a,b] [--batches 256,4096] [--precision fp32]
                           [--md bench/results/rl_cuda.md] [--json bench/results/rl_cuda.json]
  python3 bench/rl/cuda.py --from-json rl_cuda.json [--md ...]   # re-render saved measurements
"""
import argparse
import json
import subprocess
import sys

POLICIES = ["greedy", "beam:8", "rl"]
KEEP = ("latency_ms", "baseline_latency_ms", "modelled_latency_ms", "baseline_modelled_latency_ms",
        "optimize_seconds", "max_abs_diff_vs_unoptimized", "device", "profile")


def bench(a, model, batch, policy):
    name = f"rl:{a.policy}" if policy == "rl" else policy
    cmd = [a.cagr, "bench", f"zoo/onnx/{model}.dynamo.onnx", "--target", "cuda", "--policy", name, "--batch",
           str(batch), "--json"]
    if a.precision != "fp32":
        cmd += ["--precision", a.precision]
    if a.hw:
        cmd += ["--hw", a.hw]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
    if p.returncode != 0:
        return {"error": (p.stderr.strip() or p.stdout.strip()).splitlines()[-1][:300] if (p.stderr or p.stdout)
                else f"exit {p.returncode}"}
    j = json.loads(p.stdout)
    return {k: j.get(k) for k in KEEP} | {"decisions": len(j.get("decisions", []))}


def fmt(x, spec=".3f"):
    return "—" if x is None else format(x, spec)


def render(a, data):
    rows = data["rows"]
    device = next((r[p].get("device") for r in rows for p in POLICIES if r[p].get("device")), "the GPU")
    profile = next((r[p].get("profile") for r in rows for p in POLICIES if r[p].get("profile")), "?")
    lines = [f"# `rl` vs `greedy` vs `beam(8)` plans on {device} ({data['precision']})", "",
             f"All latencies **measured** on {device} by `cagr bench --target cuda` (CAGR's CUDA backend; the plan "
             "captured in one CUDA graph and replayed; median of CUDA-event timings), each policy's plan and the "
             "unoptimized plan timed in the same process on the same synthesized inputs. Plans are made for the "
             f"profile `{profile}` (its latencies are modelled; the `modelled` columns). The policy file is "
             f"`{data['policy']}`; autoint and ngcf are outside its training set.", "",
             f"Command: `{data['command']}`", "",
             "| model | batch | unoptimized ms | greedy ms | beam(8) ms | rl ms | rl / greedy | rl / beam(8) | "
             "rl optimize s | beam(8) optimize s | modelled rl / greedy |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    wins = ties = losses = 0
    for r in rows:
        g, b, rl = r["greedy"], r["beam:8"], r["rl"]
        if any("error" in x for x in (g, b, rl)):
            errs = "; ".join(f"{p}: {r[p]['error']}" for p in POLICIES if "error" in r[p])
            lines.append(f"| {r['model']} | {r['batch']} | failed: {errs} |||||||||")
            continue
        ratio = rl["latency_ms"] / g["latency_ms"]
        wins += ratio < 0.97
        losses += ratio > 1.03
        ties += 0.97 <= ratio <= 1.03
        mod = rl["modelled_latency_ms"] / g["modelled_latency_ms"] if g.get("modelled_latency_ms") else None
        lines.append(f"| {r['model']} | {r['batch']} | {fmt(g['baseline_latency_ms'])} | {fmt(g['latency_ms'])} | "
                     f"{fmt(b['latency_ms'])} | {fmt(rl['latency_ms'])} | {ratio:.2f} | "
                     f"{rl['latency_ms'] / b['latency_ms']:.2f} | {fmt(rl['optimize_seconds'])} | "
                     f"{fmt(b['optimize_seconds'])} | {fmt(mod, '.2f')} |")
    lines += ["", f"rl vs greedy, measured (within 3 % counts as a tie): {wins} faster, {ties} tied, {losses} slower."]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cagr", default="build/cagr")
    ap.add_argument("--policy", default="policies/default.rlp")
    ap.add_argument("--hw", default="")
    ap.add_argument("--models", default="dlrm_criteo,deepfm,xdeepfm,dcnv2,wide_deep,autoint,ngcf")
    ap.add_argument("--batches", default="256,4096")
    ap.add_argument("--precision", default="fp32", choices=["fp32", "tf32", "bf16"])
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--from-json", default="")
    ap.add_argument("--md", default="bench/results/rl_cuda.md")
    ap.add_argument("--json", default="bench/results/rl_cuda.json")
    a = ap.parse_args()
    if a.from_json:
        with open(a.from_json) as f:
            data = json.load(f)
    else:
        rows = []
        for model in a.models.split(","):
            for batch in [int(x) for x in a.batches.split(",") if x]:
                row = {"model": model, "batch": batch, **{p: bench(a, model, batch, p) for p in POLICIES}}
                rows.append(row)
                print(model, batch, " ".join(f"{p}={row[p].get('latency_ms') or row[p].get('error')}"
                                              for p in POLICIES), flush=True)
        command = "python3 bench/rl/cuda.py " + " ".join(sys.argv[1:])
        data = {"command": command, "policy": a.policy, "precision": a.precision, "rows": rows}
        with open(a.json, "w") as f:
            json.dump(data, f, indent=1)
    with open(a.md, "w") as f:
        f.write(render(a, data))
    print(f"wrote {a.md}" + ("" if a.from_json else f" and {a.json}"))


if __name__ == "__main__":
    main()
