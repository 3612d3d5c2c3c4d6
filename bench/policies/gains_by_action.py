#!/usr/bin/env python3
"""Which actions pay most on which platform (modelled).

Runs `cagr optimize --policy greedy --json` for every zoo model on every
built-in platform and sums each action kind's modelled latency gain, as a
share of the unoptimized plan's modelled latency, averaged over the models.

  python3 bench/policies/gains_by_action.py [--cagr build/cagr] [--batch 4096] [--out bench/results/policy_gains.md]
"""
import argparse
import collections
import json
import subprocess

MODELS = ["dlrm_criteo", "dlrm_avazu", "deepfm", "xdeepfm", "dcnv2", "wide_deep", "autoint", "ngcf"]
PLATFORMS = ["x86-64", "v100", "a100", "h100", "h200", "mi100", "mi250x", "tpu-v3", "tpu-v4"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cagr", default="build/cagr")
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--out", default="bench/results/policy_gains.md")
    args = ap.parse_args()
    share = collections.defaultdict(lambda: collections.defaultdict(float))
    kinds = set()
    for platform in PLATFORMS:
        for model in MODELS:
            out = subprocess.run([args.cagr, "optimize", f"zoo/onnx/{model}.dynamo.onnx", "--target", platform,
                                  "--policy", "greedy", "--batch", str(args.batch), "--json"],
                                 check=True, capture_output=True, text=True).stdout
            j = json.loads(out)
            base = j["baseline_latency_ms"]
            for d in j["decisions"]:
                kinds.add(d["kind"])
                share[platform][d["kind"]] += d["gain_ms_modelled"] / base / len(MODELS)
    kinds = sorted(kinds)
    lines = [
        f"# Modelled latency gain per action kind (greedy, batch {args.batch})",
        "",
        "Share of the unoptimized plan's modelled latency that each action kind removed, averaged over the "
        f"{len(MODELS)} zoo models (dynamo exports), per built-in platform. Modelled with each platform's "
        "datasheet profile; nothing here is measured. Negative: the kind was taken for memory or variance "
        "at a small latency cost.",
        "",
        f"Command: `python3 bench/policies/gains_by_action.py --batch {args.batch}`",
        "",
        "| platform | " + " | ".join(kinds) + " |",
        "|---|" + "---|" * len(kinds),
    ]
    for platform in PLATFORMS:
        lines.append(f"| {platform} | " + " | ".join(f"{100 * share[platform][k]:.1f}%" for k in kinds) + " |")
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
