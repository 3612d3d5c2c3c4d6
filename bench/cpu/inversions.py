#!/usr/bin/env python3
"""Plans never slower than no plan (issue 39): times every zoo model and one
export of every third-party model that imports (zoo/thirdparty, the manifest's
"pass" fixtures: TorchScript opset 17 with a dynamic batch where it imports,
else its fixed-batch export, on the fixture's own inputs) on the CPU backend, unoptimized against the
default greedy plan, and fails loudly (exit 1) when a plan is measured slower.

  python3 bench/cpu/inversions.py --cagr build/cagr [--batch 256] [--threads 2]
      [--rounds 2] [--seconds 0.5] [--slack 0.95] [--models a,b] [--out FILE.md]

Each model is timed `--rounds` times (each round: `cagr bench`, which times
both plans back to back, median over >= --seconds); a model is an inversion
when the plan's speed-up is below --slack in every round, so one noisy round
on a shared host does not flag it. Measured on this host; the report says so.
Standard library only.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ZOO = ["dlrm_criteo", "dlrm_avazu", "deepfm", "xdeepfm", "dcnv2", "wide_deep", "autoint", "ngcf"]


def models(only):
    out = [(f"zoo {m}", os.path.join(ROOT, "zoo", "onnx", f"{m}.ts.onnx"), None) for m in ZOO]
    with open(os.path.join(ROOT, "zoo", "thirdparty", "manifest.json")) as fh:
        fixtures = json.load(fh)["fixtures"]
    by_model = {}
    for f in fixtures:
        if f.get("expected") != "pass" or f["exporter"] != "ts" or f.get("requested_opset", f["opset"]) != 17:
            continue
        by_model.setdefault(f["model"], {})[f["batch_mode"]] = f
    for model, forms in by_model.items():
        f = forms.get("dynamic") or forms.get("fixed")
        b = max(f["refs"], key=int)  # the fixture's own inputs (skewed ids), at its largest batch
        inputs = os.path.join(ROOT, "zoo", "thirdparty", f["refs"][b]["inputs"])
        out.append((f"{f['family']} {model} ({f['batch_mode']})", os.path.join(ROOT, "zoo", "thirdparty", f["onnx"]),
                    (int(b), inputs)))
    return [m for m in out if not only or any(o in m[0] for o in only)]


def bench(cagr, path, batch, threads, seconds, inputs=None):
    cmd = [cagr, "bench", path, "--target", "cpu", "--batch", str(batch), "--threads", str(threads),
           "--seconds", str(seconds), "--json"] + (["--inputs", inputs] if inputs else [])
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        return None, (p.stderr or p.stdout).strip().splitlines()[-1:]
    j = json.loads(p.stdout)
    return (j["baseline_latency_ms"], j["latency_ms"], len(j["decisions"])), None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cagr", required=True)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=0.5)
    ap.add_argument("--slack", type=float, default=0.95, help="speed-up below this in every round is an inversion")
    ap.add_argument("--models", default="", help="comma-separated substrings of model labels")
    ap.add_argument("--out", help="markdown report")
    a = ap.parse_args()
    rows, inversions, errors = [], [], []
    for label, path, given in models([m for m in a.models.split(",") if m]):
        batch, inputs = given or (a.batch, None)
        rounds = []
        for _ in range(a.rounds):
            r, err = bench(a.cagr, path, batch, a.threads, a.seconds, inputs)
            if r is None:
                errors.append(f"{label}: {err}")
                break
            rounds.append(r)
        if not rounds:
            continue
        speedups = [base / plan for base, plan, _ in rounds]
        inverted = all(s < a.slack for s in speedups)
        rows.append((label, batch, rounds, speedups, inverted))
        if inverted:
            inversions.append(label)
        print(f"{'INVERTED ' if inverted else ''}{label} b{batch}: " +
              ", ".join(f"{b:.3f} -> {p:.3f} ms ({s:.2f}x)" for (b, p, _), s in zip(rounds, speedups)), flush=True)
    lines = [f"# Optimized vs unoptimized plans, CPU backend (measured, {platform.node()}, "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})", "",
             f"`python3 bench/cpu/inversions.py --cagr {a.cagr} --batch {a.batch} --threads {a.threads} "
             f"--rounds {a.rounds} --seconds {a.seconds}`: zoo models on synthesized inputs at --batch; third-party "
             "models on their fixtures' own inputs (Zipf-like ids) at batch 256, fixed-batch exports at 64. Speed-up = "
             "unoptimized median / greedy median, per round; an inversion is below "
             f"{a.slack} in every round.", "",
             "| model | batch | unoptimized ms | greedy ms | speed-up | decisions | |", "|---|---:|---|---|---|---:|---|"]
    for label, batch, rounds, speedups, inverted in rows:
        lines.append(f"| {label} | {batch} | " + " / ".join(f"{r[0]:.3f}" for r in rounds) + " | " +
                     " / ".join(f"{r[1]:.3f}" for r in rounds) + " | " + " / ".join(f"{s:.2f}x" for s in speedups) +
                     f" | {rounds[0][2]} | {'**inverted**' if inverted else ''} |")
    lines += ["", f"{len(inversions)} inversions of {len(rows)} models; {len(errors)} errors."]
    lines += [f"- error: {e}" for e in errors]
    if a.out:
        with open(a.out, "w") as fh:
            fh.write("\n".join(lines) + "\n")
    print("\n".join(lines[-1 - len(errors):]))
    if inversions:
        print("INVERSIONS (the optimized plan measured slower): " + ", ".join(inversions), file=sys.stderr)
    return 1 if inversions or errors else 0


if __name__ == "__main__":
    sys.exit(main())
