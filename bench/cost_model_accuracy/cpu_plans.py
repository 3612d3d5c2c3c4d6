#!/usr/bin/env python3
"""End-to-end cost-model accuracy against CAGR's own CPU plans (issue 3).

For every zoo model and batch, `cagr bench --json --hw PROFILE` compiles the
unoptimized and the greedy plan on the CPU backend and reports both measured
medians and both modelled latencies (the same plans, priced with PROFILE, a
profile measured on this host by `cagr profile --target cpu`). This script
scores modelled vs measured: MAPE and Spearman rank correlation over all
(model, batch, plan) points. Measure PROFILE with the thread count the plans
run with (--threads; all CPUs by default), and on a quiet machine: these are
wall-clock medians. On a shared machine use the kernel-by-kernel CPU-time
comparison instead (cagr_bench_kernel_accuracy --plans, one thread).

  python3 bench/cost_model_accuracy/cpu_plans.py --hw host.json [--cagr build/cagr] [--batches 256,4096] \
      [--out bench/results/cost_model_cpu_plans.md]
"""
import argparse
import json
import subprocess

from report import spearman  # noqa: E402  (same folder; one rank-correlation for every report)

MODELS = ["dlrm_criteo", "dlrm_avazu", "deepfm", "xdeepfm", "dcnv2", "wide_deep", "autoint", "ngcf"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hw", required=True, help="CPU profile measured on this host (cagr profile --target cpu)")
    ap.add_argument("--cagr", default="build/cagr")
    ap.add_argument("--batches", default="256,4096")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--out", default="bench/results/cost_model_cpu_plans.md")
    args = ap.parse_args()
    rows = []
    for model in MODELS:
        for batch in [int(b) for b in args.batches.split(",")]:
            cmd = [args.cagr, "bench", f"zoo/onnx/{model}.dynamo.onnx", "--target", "cpu", "--hw", args.hw,
                   "--batch", str(batch), "--seconds", "1", "--runs", "5", "--json"]
            if args.threads:
                cmd += ["--threads", str(args.threads)]
            j = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
            rows.append((model, batch, "unoptimized", j["baseline_modelled_latency_ms"], j["baseline_latency_ms"]))
            rows.append((model, batch, j["policy"], j["modelled_latency_ms"], j["latency_ms"]))
    pred = [r[3] for r in rows]
    meas = [r[4] for r in rows]
    mape = 100 * sum(abs(p - m) / m for p, m in zip(pred, meas)) / len(rows)
    lines = ["# Cost model vs CAGR's own CPU plans (end to end)", "",
             f"Modelled: the roofline cost model with `{args.hw}`. Measured: `cagr bench` medians of the same plans on "
             "the CPU backend, this host. Command: `python3 bench/cost_model_accuracy/cpu_plans.py --hw "
             f"{args.hw} --batches {args.batches}`", "",
             f"MAPE {mape:.1f} %, Spearman {spearman(pred, meas):.3f} over {len(rows)} plans.", "",
             "| model | batch | plan | modelled ms | measured ms | error % |", "|---|---|---|---|---|---|"]
    for m, b, plan, p, x in rows:
        lines.append(f"| {m} | {b} | {plan} | {p:.3f} | {x:.3f} | {100 * (p - x) / x:+.1f} |")
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
