#!/usr/bin/env python3
"""The generalization table over several seeds: reads the generalization JSONs
`ablate.py` wrote (--json-generalization) for the same budget with different
--seed values and reports, per training set, the mean share of beam(8)'s
modelled gain on the platforms it saw and on those it did not, per seed and
averaged; and, so that training sets compare on the same cells, on the
platforms none of the small training sets saw (a100, h100, h200, mi250x,
tpu-v4, x86-64). All latencies modelled (see the JSONs).

  python3 bench/rl/generalization_seeds.py bench/results/rl_generalization_u150.json \\
      bench/results/rl_generalization_u150_s2.json --md bench/results/rl_generalization_seeds.md
"""
import argparse
import json
import statistics

SETS = {"train-v100": {"v100"}, "train-v100-mi100": {"v100", "mi100"},
        "train-v100-mi100-tpu-v3": {"v100", "mi100", "tpu-v3"},
        "baseline": {"v100", "a100", "h100", "h200", "mi100", "mi250x", "tpu-v3", "x86-64"}}
LABEL = {"train-v100": "{v100}", "train-v100-mi100": "{v100, mi100}",
         "train-v100-mi100-tpu-v3": "{v100, mi100, tpu-v3}", "baseline": "8 platforms (default recipe)"}
COMMON = {"a100", "h100", "h200", "mi250x", "tpu-v4", "x86-64"}  # left out by every small training set


def share(rl, search):
    beam = search["none"]["latency_ms_modelled"] - search["beam:8"]["latency_ms_modelled"]
    if beam <= 0:
        return None
    return (search["none"]["latency_ms_modelled"] - rl["latency_ms_modelled"]) / beam


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else float("nan")


def shares(js, name, platforms):
    cells = js["rl_cells"].get(name, {})
    return mean(share(c, js["search_cells"][k]) for k, c in cells.items() if k.split("/")[1] in platforms)


def pct(x):
    return "n/a" if x != x else f"{100 * x:.1f}%"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("jsons", nargs="+")
    ap.add_argument("--md", required=True)
    a = ap.parse_args()
    runs = [json.load(open(p)) for p in a.jsons]
    seeds = [r["seed"] for r in runs]
    allp = set()
    for r in runs:
        allp |= {k.split("/")[1] for k in r["search_cells"]}
    md = ["# RL policy generalization over seeds (issue 7, item 4)", "",
          f"Modelled (roofline cost model at batch {runs[0]['batch']}, datasheet profiles); {runs[0]['updates']} PPO "
          f"updates per policy, seeds {', '.join(map(str, seeds))}; from " + ", ".join(f"`{p}`" for p in a.jsons) +
          ". Share = the policy's modelled latency reduction over none / beam(8)'s, averaged over the cells (zoo "
          "model x platform) with a beam gain. 'seen' / 'left out': the platforms in / outside that training set; "
          "'common left out': " + ", ".join(sorted(COMMON)) + ", which none of the three small training sets saw, "
          "so the rows compare on the same cells (the 8-platform baseline saw all of them but tpu-v4).", "",
          f"Command: `python3 bench/rl/generalization_seeds.py {' '.join(a.jsons)} --md {a.md}`", "",
          "| trained on | seen: mean (per seed) | left out: mean (per seed) | common left out: mean (per seed) |",
          "|---|---|---|---|"]
    for name, seen in SETS.items():
        cols = []
        for plats in (seen, allp - seen, COMMON):
            per = [shares(r, name, plats) for r in runs]
            cols.append(f"{pct(mean(per))} ({' / '.join(pct(x) for x in per)})")
        md.append(f"| {LABEL[name]} | " + " | ".join(cols) + " |")
    spread = [statistics.pstdev([shares(r, n, COMMON) for r in runs]) for n in SETS if n != "baseline"]
    md += ["", f"Seed-to-seed standard deviation of the common-left-out share for the small training sets: "
           + ", ".join(pct(s) for s in spread) + "."]
    with open(a.md, "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
