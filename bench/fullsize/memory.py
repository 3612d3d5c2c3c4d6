#!/usr/bin/env python3
"""Peak host memory of import / optimize / run at full table size (issue 39).

  python3 bench/fullsize/memory.py --cagr build/cagr [--model dlrm_criteo] [--batch 2048]
      [--out bench/results/fullsize_memory.md]

Makes the full-size model (make_full.py, if missing) and a Zipf batch
(data/gen.py, full cardinalities), then runs under /usr/bin/time -v:
  cagr run MODEL.onnx --target cpu          (import + CPU backend + one batch)
  cagr optimize MODEL.onnx --target cpu -o PLAN.cagr
  cagr run PLAN.cagr --target cpu
and reports each command's peak resident set (measured) against the bytes of
the model's weights, the plan's file sizes, and the max |difference| of the
plan's output from the unoptimized model's.
"""
import argparse
import os
import platform
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATASET = {"dlrm_criteo": "criteo", "dlrm_avazu": "avazu"}


def timed(cmd):
    r = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{r.stdout}{r.stderr}")
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr).group(1)) * 1024
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", r.stderr).group(1)
    return rss, wall


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cagr", default=os.path.join(ROOT, "build", "cagr"))
    ap.add_argument("--model", choices=sorted(DATASET), default="dlrm_criteo")
    ap.add_argument("--batch", type=int, default=2048)
    ap.add_argument("--work", default=os.path.join(ROOT, "out", "full"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "fullsize_memory.md"))
    a = ap.parse_args()
    model = os.path.join(a.work, f"{a.model}.ts.full.onnx")
    if not os.path.exists(model):
        subprocess.run([sys.executable, os.path.join(HERE, "make_full.py"), "--model", a.model, "--out", a.work], check=True)
    inputs = os.path.join(a.work, f"{a.model}_b{a.batch}.npz")
    subprocess.run([sys.executable, os.path.join(ROOT, "data", "gen.py"), "--dataset", DATASET[a.model], "--format",
                    "dlrm", "--batch", str(a.batch), "--seed", "1", "-o", inputs], check=True, capture_output=True)
    weights = os.path.getsize(model.replace(".onnx", ".data"))
    plan = os.path.join(a.work, f"{a.model}.cpu.cagr")
    base_out, plan_out = os.path.join(a.work, "base.out.npz"), os.path.join(a.work, "plan.out.npz")
    rows = []
    for what, cmd in [
        ("import + run (CPU backend)", ["run", model, "--target", "cpu", "--inputs", inputs, "--output", base_out]),
        ("import + optimize + write plan", ["optimize", model, "--target", "cpu", "--batch", str(a.batch), "-o", plan]),
        ("load plan + run (CPU backend)", ["run", plan, "--target", "cpu", "--inputs", inputs, "--output", plan_out]),
    ]:
        rss, wall = timed([a.cagr] + cmd)
        rows.append((what, "cagr " + " ".join(os.path.relpath(c, ROOT) if os.path.sep in c else c for c in cmd), rss, wall))
    b, p = np.load(base_out), np.load(plan_out)
    diff = max(float(np.abs(b[k] - p[k]).max()) for k in b.files)
    lines = [f"# Peak host memory at full table size ({a.model}, issue 39)", "",
             f"Measured on this host ({platform.node()}, {os.cpu_count()} cores; `/usr/bin/time -v` peak RSS), "
             f"batch {a.batch}, Zipf ids over the full cardinalities. Weights: "
             f"{weights / 2**30:.2f} GiB of f32 tables (`{os.path.relpath(model, ROOT)}` + its `.data` file, "
             f"made by `bench/fullsize/make_full.py`). Command: `python3 bench/fullsize/memory.py`.", "",
             "| step | command | peak RSS | × weights | wall |", "|---|---|---|---|---|"]
    for what, cmd, rss, wall in rows:
        lines.append(f"| {what} | `{cmd}` | {rss / 2**30:.2f} GiB | {rss / weights:.2f} | {wall} |")
    lines += ["", f"Plan on disk: `{os.path.basename(plan)}` {os.path.getsize(plan) / 2**20:.1f} MiB of text + "
              f"`.weights` {os.path.getsize(plan + '.weights') / 2**30:.2f} GiB (raw, mapped when loaded). "
              f"Plan output vs unoptimized model: max |diff| {diff:.2e}.", "",
              "External data ≥ 1 MiB is memory-mapped, not read, so importing costs only the pages a batch touches; "
              "loading a plan reads its whole weights file once to check its seal, so that peak is the weights' size."]
    with open(a.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
