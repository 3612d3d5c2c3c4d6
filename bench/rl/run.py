#!/usr/bin/env python3
"""Issue 7 evaluation, part 1: the trained `rl` policy against the search
policies on every zoo model x every built-in platform.

For each cell it runs `cagr optimize MODEL --target P --policy X --json` for
X in none, random, greedy, beam:8, exhaustive and rl, and records the
modelled latency (roofline cost model on the platform's datasheet profile)
and the measured optimization time (wall time of optimize() on this host).
Models and platforms the default policy never saw in training are marked.
Writes Markdown and JSON.

  python3 bench/rl/run.py [--cagr build/cagr] [--policy policies/default.rlp]
                          [--batch 256] [--models a,b] [--platforms x,y]
                          [--md bench/results/rl_eval.md] [--json bench/results/rl_eval.json]
"""
import argparse
import json
import os
import platform as host
import subprocess
import sys

MODELS = ["dlrm_criteo", "dlrm_avazu", "deepfm", "xdeepfm", "dcnv2", "wide_deep", "autoint", "ngcf"]
PLATFORMS = ["v100", "a100", "h100", "h200", "mi100", "mi250x", "tpu-v3", "tpu-v4", "x86-64"]
UNSEEN_MODELS = {"autoint", "ngcf"}     # the default policy's training set leaves these out
UNSEEN_PLATFORMS = {"tpu-v4"}
POLICIES = ["none", "random", "greedy", "beam:8", "exhaustive", "rl", "rl+greedy"]
RL_POLICIES = ("rl", "rl+greedy")  # run with the --policy weights


def run_cell(cagr, model, platform, policy, batch, rl_path):
    name = f"{policy}:{rl_path}" if policy in RL_POLICIES else policy
    cmd = [cagr, "optimize", f"zoo/onnx/{model}.dynamo.onnx", "--target", platform, "--policy", name,
           "--batch", str(batch), "--json"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}"}
    j = json.loads(p.stdout)
    cell = {"latency_ms_modelled": j["latency_ms"], "baseline_ms_modelled": j["baseline_latency_ms"],
            "optimize_seconds_measured": j["optimize_seconds"], "decisions": len(j["decisions"])}
    if "variance" in j:  # V_H, the modelled relative run-to-run std the reward's lambda_c term uses
        cell["variance_modelled"] = j["variance"]
    return cell


def gain(cell, policy):
    """Modelled latency reduction of `policy` relative to none (ms)."""
    c = cell[policy]
    return None if "error" in c else cell["none"]["latency_ms_modelled"] - c["latency_ms_modelled"]


def fmt_ms(c):
    return "n/a" if c is None or "error" in c else f"{c['latency_ms_modelled']:.4f}"


def summary(rows, p="rl"):
    """Headline numbers of policy `p` (rl or rl+greedy): its share of beam(8)'s gain, time ratio, cells
    beating greedy."""
    out = []
    groups = [("all cells", rows),
              ("unseen models (autoint, ngcf)", [r for r in rows if r["model"] in UNSEEN_MODELS]),
              ("seen models, seen platforms", [r for r in rows if r["model"] not in UNSEEN_MODELS
                                               and r["platform"] not in UNSEEN_PLATFORMS]),
              ("unseen platform (tpu-v4)", [r for r in rows if r["platform"] in UNSEEN_PLATFORMS])]
    for label, rs in groups:
        if not rs:
            continue
        rl_gain = sum(gain(r, p) for r in rs)
        beam_gain = sum(gain(r, "beam:8") for r in rs)
        share = [gain(r, p) / gain(r, "beam:8") for r in rs if gain(r, "beam:8") > 0]
        greedy_share = [gain(r, "greedy") / gain(r, "beam:8") for r in rs if gain(r, "beam:8") > 0]
        beats = sum(1 for r in rs if r[p]["latency_ms_modelled"] < r["greedy"]["latency_ms_modelled"] * (1 - 1e-4))
        losses = sum(1 for r in rs if r[p]["latency_ms_modelled"] > r["greedy"]["latency_ms_modelled"] * (1 + 1e-4))
        ties = len(rs) - beats - losses
        b_better = sum(1 for r in rs if r[p]["latency_ms_modelled"] < r["beam:8"]["latency_ms_modelled"] * (1 - 1e-4))
        b_worse = sum(1 for r in rs if r[p]["latency_ms_modelled"] > r["beam:8"]["latency_ms_modelled"] * (1 + 1e-4))
        t_rl = sum(r[p]["optimize_seconds_measured"] for r in rs)
        t_beam = sum(r["beam:8"]["optimize_seconds_measured"] for r in rs)
        speedup = lambda p: sum(r["none"]["latency_ms_modelled"] / r[p]["latency_ms_modelled"] for r in rs) / len(rs)
        out.append(f"| {label} | {len(rs)} | {100 * sum(share) / max(1, len(share)):.1f}% | "
                   f"{100 * rl_gain / beam_gain if beam_gain > 0 else 0:.1f}% | "
                   f"{100 * min(share):.1f}% | {100 * sum(greedy_share) / max(1, len(greedy_share)):.1f}% | "
                   f"{b_better} / {len(rs) - b_better - b_worse} / {b_worse} | {speedup(p):.2f} | "
                   f"{speedup('greedy'):.2f} | {speedup('beam:8'):.2f} | {beats} / {ties} / {len(rs) - beats - ties} | "
                   f"{t_rl:.2f} | {t_beam:.2f} | {t_rl / t_beam:.3f} |")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cagr", default="build/cagr")
    ap.add_argument("--policy", default="policies/default.rlp")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--platforms", default=",".join(PLATFORMS))
    ap.add_argument("--md", default="bench/results/rl_eval.md")
    ap.add_argument("--json", default="bench/results/rl_eval.json")
    ap.add_argument("--from-json", help="re-render the report from a previous run's JSON (no new runs)")
    a = ap.parse_args()
    rows = json.load(open(a.from_json)) if a.from_json else []
    for model in [] if a.from_json else a.models.split(","):
        for plat in a.platforms.split(","):
            row = {"model": model, "platform": plat, "batch": a.batch,
                   "unseen_model": model in UNSEEN_MODELS, "unseen_platform": plat in UNSEEN_PLATFORMS}
            for pol in POLICIES:
                row[pol] = run_cell(a.cagr, model, plat, pol, a.batch, a.policy)
            for must in ("none", "greedy", "beam:8", "rl", "rl+greedy"):
                if "error" in row[must]:
                    sys.exit(f"{model} on {plat}, {must}: {row[must]['error']}")
            rows.append(row)
            print(f"{model:12s} {plat:7s} " + " ".join(f"{p}={fmt_ms(row[p])}" for p in POLICIES), flush=True)
    cmd = ("python3 bench/rl/run.py --cagr " + a.cagr + " --policy " + a.policy + " --batch " + str(a.batch))
    lines = [f"# The `rl` policy vs search, every zoo model x every built-in platform (batch {a.batch})", "",
             "Latency is **modelled** (roofline cost model, each platform's built-in datasheet profile; x86-64 is a "
             "generic stand-in, not this host). Optimization time is **measured**: wall time of optimize() on "
             f"this host ({host.machine()}, {os.cpu_count()} vCPU, shared with other builds while it ran, so times "
             "are noisy). `rl` = the committed default policy "
             f"(`{a.policy}`) run greedily by the core's own forward pass. Cells marked * are outside its "
             "training set (models autoint and ngcf, platform tpu-v4). `exhaustive` is n/a everywhere: it refuses "
             "graphs over 40 nodes (every zoo model but ngcf) and gives up on ngcf after 200,000 states. Reward "
             "as in `cagr optimize`: lambda_m 0.1, lambda_c 0.2.", "",
             f"Command: `{cmd}`", "", "## Summary", "",
             "share of beam gain = rl's modelled latency reduction over none divided by beam(8)'s (mean over "
             "cells with a beam gain, pooled over the cells, and the worst cell; above 100% where rl finds a "
             "faster plan than beam, which maximises the reward, not latency alone); speed-ups over none are "
             "means over cells; win/tie/loss counts cells where rl's plan is faster / equal (within 0.01%) / "
             "slower; times are summed over the cells (measured).", "",
             "| cells | n | rl share of beam gain (mean) | (pooled) | (worst cell) | greedy share (mean) | rl vs beam "
             "(win/tie/loss) | rl x | greedy x | beam(8) x | rl vs greedy (win/tie/loss) | rl s | beam s | "
             "rl/beam time |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    lines += summary(rows)
    if all("rl+greedy" in r for r in rows):
        lines += ["", "`rl+greedy`: rl's plan, then greedy steps (the action of the best modelled reward while one "
                  "gains and the plan verifies, the episode extended by its step limit). A hybrid, reported beside "
                  "`rl`, not as it; same columns, for it:", "",
                  "| cells | n | rl+greedy share of beam gain (mean) | (pooled) | (worst cell) | greedy share (mean) | "
                  "rl+greedy vs beam (win/tie/loss) | rl+greedy x | greedy x | beam(8) x | rl+greedy vs greedy "
                  "(win/tie/loss) | rl+greedy s | beam s | rl+greedy/beam time |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        lines += summary(rows, "rl+greedy")
    dlrm = [r for r in rows if r["model"] == "dlrm_criteo"]
    if dlrm:
        per = [r["rl"]["optimize_seconds_measured"] / (r["rl"]["decisions"] + 1) for r in dlrm]
        lines += ["", f"`rl` on dlrm_criteo (96 HIR nodes): {1e3 * sum(per) / len(per):.2f} ms per decision, mean over "
                  f"the {len(per)} platforms (measured: optimize() wall time / (applied actions + stop), so it "
                  "includes the environment's step and the enumeration of the legal actions, not only the "
                  "forward pass)."]
    lines += ["", "## Every cell", "",
              "| model | platform | none ms | random ms | greedy ms | beam(8) ms | exhaustive ms | rl ms | "
              "rl+greedy ms | rl/beam gain | greedy s | beam s | rl s | rl+greedy s | rl steps |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        g_beam, g_rl = gain(r, "beam:8"), gain(r, "rl")
        share = f"{100 * g_rl / g_beam:.1f}%" if g_beam > 0 else "-"
        lines.append(f"| {r['model']}{'*' if r['unseen_model'] else ''} | {r['platform']}"
                     f"{'*' if r['unseen_platform'] else ''} | " + " | ".join(fmt_ms(r.get(p)) for p in POLICIES) +
                     f" | {share} | {r['greedy']['optimize_seconds_measured']:.3f} | "
                     f"{r['beam:8']['optimize_seconds_measured']:.3f} | {r['rl']['optimize_seconds_measured']:.3f} | "
                     f"{r.get('rl+greedy', {}).get('optimize_seconds_measured', float('nan')):.3f} | "
                     f"{r['rl']['decisions']} |")
    with open(a.md, "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(a.json, "w") as f:
        json.dump(rows, f, indent=1)
    print("\n".join(lines[lines.index("## Summary"):lines.index("## Every cell")]))


if __name__ == "__main__":
    main()
