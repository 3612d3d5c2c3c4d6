#!/usr/bin/env python3
"""Ablations over several seeds: reads the JSONs `ablate.py` wrote for the same
variants and budget with different --seed values and reports, per variant, the
mean and the range over the seeds of the headline figures (all modelled), and
for how many seeds each variant falls short of the baseline of the same seed.

  python3 bench/rl/ablate_seeds.py bench/results/rl_ablations_u150.json \
      bench/results/rl_ablations_u150_s2.json --md bench/results/rl_ablations_seeds.md
"""
import argparse
import json
import statistics

METRICS = [("mean_share_of_beam_gain", "mean share of beam gain", True),
           ("mean_share_unseen_models", "unseen-model cells", True),
           ("worst_share", "worst cell", True),
           ("mean_latency_over_beam", "latency / beam", False),
           ("mean_variance_modelled", "mean V_H", None)]


def pct(x):
    return f"{100 * x:.1f}%"


def cell(values, metric):
    fmt = (lambda v: f"{v:.3f}") if metric == "mean_latency_over_beam" else pct
    lo, hi = min(values), max(values)
    return f"{fmt(statistics.mean(values))} ({fmt(lo)}-{fmt(hi)})"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", help="ablate.py JSONs (--json-ablations), one per seed")
    ap.add_argument("--md", required=True)
    a = ap.parse_args()
    runs = [json.load(open(p)) for p in a.runs]
    seeds = [r["seed"] for r in runs]
    updates = sorted({r["updates"] for r in runs})
    variants = [v for v in runs[0]["stats"] if v != "default" and all(v in r["stats"] for r in runs)]
    lines = ["# RL policy ablations over seeds (issue 7, item 4)", "",
             f"Every figure is **modelled** (roofline cost model, batch {runs[0]['batch']}, the built-in datasheet "
             "profiles), as in `rl_ablations_u150.md`. Each seed re-trains every variant, the default-recipe baseline "
             f"included, for {', '.join(map(str, updates))} PPO updates (`ablate.py --seed S`); a cell is the mean "
             "over the seeds with the range in brackets. Short of baseline = seeds in which the variant's mean share "
             "of beam(8)'s gain is below the baseline's of the same seed.", "",
             f"Seeds: {', '.join(map(str, seeds))}; runs: {', '.join(a.runs)}.", "",
             "| variant | " + " | ".join(m[1] for m in METRICS) + " | short of baseline (mean share) | "
             "short of baseline (unseen models) |",
             "|---|" + "---|" * (len(METRICS) + 2)]
    for v in variants:
        row = [v]
        for key, _, _ in METRICS:
            row.append(cell([r["stats"][v][key] for r in runs], key))
        for key in ("mean_share_of_beam_gain", "mean_share_unseen_models"):
            short = sum(1 for r in runs if r["stats"][v][key] < r["stats"]["baseline"][key])
            row.append("-" if v == "baseline" else f"{short} of {len(runs)}")
        lines.append("| " + " | ".join(row) + " |")
    with open(a.md, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
