#!/usr/bin/env python3
"""The cost model against the plans a CUDA side by side measured (no GPU).

Each CAGR cell of a side-by-side report (bench/cuda/run.py's JSON: model,
batch, precision, measured median of the plan's CUDA-graph replays) is
re-optimized here with the profile the run priced it with (`cagr optimize
--hw PROFILE --batch B --precision P --json`: greedy is deterministic, so it
is the plan that ran, as long as the build chooses as the run's did), and
its modelled latency is scored against the measured median: error per
cell, MAPE and Spearman overall and per precision.

  python3 bench/cost_model_accuracy/sbs_plans.py --cagr build/cagr \\
      --hw bench/results/hw/h100-probed.json \\
      --sbs bench/results/cuda_side_by_side_h100.json --out /tmp/sbs_plans.md

Everything measured comes from the report (its GPU); everything modelled
from this build's cost model and PROFILE.
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import spearman  # noqa: E402  (same folder)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PRECISIONS = ["fp32", "tf32", "bf16"]


def measured_cells(paths):
    """(model, batch, precision) -> measured CAGR median ms, later files
    winning; and the GPUs the runs name."""
    cells, gpus = {}, set()
    for path in paths:
        try:
            report = json.load(open(path))
            records = report["records"]
        except (OSError, ValueError, KeyError) as e:
            sys.exit(f"{path}: not a side-by-side report ({e})")
        gpus.update(r.get("gpu", {}).get("name", "?") for r in report.get("runs", []))
        for r in records:
            if r.get("kind") == "engine" and r.get("engine") == "cagr" and r.get("ok") and r.get("median_ms"):
                cells[(r["model"], int(r["batch"]), r["precision"])] = r["median_ms"]
    if not cells:
        sys.exit(f"{', '.join(paths)}: no measured CAGR cell")
    return cells, sorted(gpus)


def modelled_ms(cagr, hw, model, batch, precision):
    onnx = os.path.join(ROOT, "zoo", "onnx", f"{model}.dynamo.onnx")
    # (--precision fp32 is the target `cagr bench` prices an fp32 cell with)
    cmd = [cagr, "optimize", onnx, "--hw", hw, "--batch", str(batch), "--precision", precision, "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {out.stderr.strip()}")
    return json.loads(out.stdout)["latency_ms"]


def score(rows):
    errs = [abs(m - t) / t * 100 for _, m, t in rows]
    rho = spearman([m for _, m, _ in rows], [t for _, _, t in rows])
    return sum(errs) / len(errs), rho


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cagr", default=os.path.join(ROOT, "build", "cagr"))
    ap.add_argument("--hw", required=True, help="the profile the run priced its plans with")
    ap.add_argument("--sbs", required=True, action="append", help="side-by-side JSON (repeatable)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    cells, gpus = measured_cells(args.sbs)
    rows = []
    for (model, batch, precision), measured in sorted(cells.items(),
                                                      key=lambda c: (c[0][0], c[0][1], PRECISIONS.index(c[0][2]))):
        rows.append(((model, batch, precision), modelled_ms(args.cagr, args.hw, model, batch, precision), measured))
    lines = ["# The cost model against the side by side's plans (modelled vs measured)", "",
             f"Measured on {', '.join(gpus)}: {', '.join(args.sbs)} (CAGR's cells, median CUDA-graph replay). "
             f"Modelled: this build's cost model with "
             f"`{args.hw}` (greedy's plan re-optimized per cell).", "",
             f"Command: `python3 bench/cost_model_accuracy/sbs_plans.py --hw {args.hw} "
             + " ".join(f"--sbs {s}" for s in args.sbs) + f" --out {args.out}`", ""]
    overall = score(rows)
    lines.append(f"**MAPE {overall[0]:.1f} %, Spearman {overall[1]:.3f} over {len(rows)} plans.**")
    lines.append("")
    for p in PRECISIONS:
        sub = [r for r in rows if r[0][2] == p]
        if sub:
            lines.append(f"- {p}: MAPE {score(sub)[0]:.1f} % over {len(sub)}")
    lines += ["", "| model | batch | precision | modelled ms | measured ms | error % |",
              "|---|---:|---|---:|---:|---:|"]
    for (model, batch, precision), m, t in rows:
        lines.append(f"| {model} | {batch} | {precision} | {m:.4f} | {t:.4f} | {(m - t) / t * 100:+.1f} |")
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {args.out}: MAPE {overall[0]:.1f} % over {len(rows)} plans")


if __name__ == "__main__":
    main()
