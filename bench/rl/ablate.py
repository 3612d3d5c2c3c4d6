#!/usr/bin/env python3
"""Issue 7 evaluation, part 2: ablations of the RL training recipe, the
generalization table (train on a few platforms, test on all), the left-out
platform (tpu-v4) and few-shot fine-tuning to it.

Every variant is trained by `cagr train` with the same seed and the same
budget in PPO updates (--updates N, reproducible; not --minutes), including
a re-trained default-recipe baseline, so variants compare like with like.
Policies and training logs go to --out (default build-rl/ablate, git-ignored);
a policy file already there is reused (delete it to retrain). Each policy is
then evaluated with bench/rl/run.py's run_cell on every zoo model x built-in
platform (modelled latency, roofline cost model on the datasheet profiles in
src/hw/profiles/) against none, greedy and beam:8 (run once, cached;
random and exhaustive are skipped).

  python3 bench/rl/ablate.py [--cagr build-rl/cagr] [--updates 60] [--parallel 2 --threads 1]
                             [--only a,b] [--stage train|eval|report|all] [--jobs 2] [--few-shot-from FILE]

`--only few-shot,train-v100,with-tpu-v4` runs the few-shot stage alone (the {v100} starting policy, the in-platform
reference and every fine-tuning whose starting policy is in --out; the others are skipped with a note).
"""
import argparse
import json
import os
import platform as host
import shlex
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as rleval  # noqa: E402  bench/rl/run.py: run_cell, gain, MODELS, PLATFORMS

DEFAULT_PLATFORMS = "v100,a100,h100,h200,mi100,mi250x,tpu-v3,x86-64"
SEARCH = ["none", "greedy", "beam:8"]
TPU_V4 = "src/hw/profiles/tpu-v4.json"

def seed_suffix(k):
    return "" if k == 1 else f"-s{k}"


# name -> (group, extra `cagr train` arguments, training platforms, what it changes)
VARIANTS = {
    "baseline": ("ablation", [], DEFAULT_PLATFORMS, "default recipe (lambda_c 0.2), re-trained at this budget"),
    "no-film": ("ablation", ["--no-film"], DEFAULT_PLATFORMS, "no FiLM: c_H reaches only the value head"),
    "lambda-c-0": ("ablation", ["--lambda-c", "0"], DEFAULT_PLATFORMS, "lambda_c = 0 (no variance term)"),
    "lambda-c-0.5": ("ablation", ["--lambda-c", "0.5"], DEFAULT_PLATFORMS, "lambda_c = 0.5"),
    "no-imitation": ("ablation", ["--no-imitation"], DEFAULT_PLATFORMS, "PPO from random weights"),
    "no-curriculum": ("ablation", ["--no-curriculum"], DEFAULT_PLATFORMS, "every graph from the first epoch"),
    "train-v100": ("generalization", ["--platforms", "v100"], "v100", "trained on {v100}"),
    "train-v100-mi100": ("generalization", ["--platforms", "v100,mi100"], "v100,mi100", "trained on {v100, mi100}"),
    "train-v100-mi100-tpu-v3": ("generalization", ["--platforms", "v100,mi100,tpu-v3"], "v100,mi100,tpu-v3",
                                "trained on {v100, mi100, tpu-v3}"),
    "with-tpu-v4": ("left-out", ["--platforms", DEFAULT_PLATFORMS + ",tpu-v4"], DEFAULT_PLATFORMS + ",tpu-v4",
                    "default recipe + tpu-v4 (the in-platform policy)"),
}
# Few-shot fine-tuning to tpu-v4 within 20 episodes on it: first one beam(8) rollout per zoo training model there
# (6, imitated: 24 epochs at --finetune's imitation defaults, lr 5e-4 in steps of 16 decisions; each rollout counts
# as an episode), then PPO with the 14 left (`--episodes 20` caps both together).
FINETUNE_ARGS = ["--platform", TPU_V4, "--synthetic", "0", "--updates", "5", "--episodes-per-platform", "4",
                 "--episodes", "20"]
# The earlier recipe, kept for comparison: 20 PPO episodes, no imitation.
FINETUNE_PPO_ARGS = ["--platform", TPU_V4, "--no-imitation", "--synthetic", "0", "--updates", "5",
                     "--episodes-per-platform", "4", "--episodes", "20"]
FEW_SHOT_SEEDS = range(1, 6)
FINETUNES = {"finetune-default": "policies/default.rlp", "finetune-baseline": "{out}/baseline.rlp",
             "finetune-train-v100-mi100-tpu-v3": "{out}/train-v100-mi100-tpu-v3.rlp",
             **{f"finetune-train-v100{seed_suffix(k)}": "{out}/train-v100.rlp" for k in FEW_SHOT_SEEDS},
             **{f"finetune-ppo-train-v100{seed_suffix(k)}": "{out}/train-v100.rlp" for k in FEW_SHOT_SEEDS}}
# The few-shot result depends on the seed of its episodes: the {v100} fine-tunings run with seeds 1-5.
FINETUNE_OVERRIDES = {f"finetune{kind}-train-v100{seed_suffix(k)}": ["--seed", str(k)]
                      for kind in ("", "-ppo") for k in FEW_SHOT_SEEDS if k != 1}
# `--only few-shot`: every fine-tuning run.
GROUPS = {"few-shot": list(FINETUNES)}
EXTRA_START = "extra-start"  # --few-shot-from FILE is copied to {out}/extra-start.rlp


def add_extra_start():
    """Fine-tunings from --few-shot-from's policy, both recipes, seeds 1-5 (a starting point far from tpu-v4)."""
    for kind in ("", "-ppo"):
        for k in FEW_SHOT_SEEDS:
            n = f"finetune{kind}-{EXTRA_START}{seed_suffix(k)}"
            FINETUNES[n] = "{out}/" + EXTRA_START + ".rlp"
            if k != 1:
                FINETUNE_OVERRIDES[n] = ["--seed", str(k)]
    GROUPS["few-shot"] = list(FINETUNES) + [EXTRA_START]


def with_overrides(args, overrides):
    """`args` with the values of the options in `overrides` (pairs) replaced."""
    out = list(args)
    for k in range(0, len(overrides), 2):
        out[out.index(overrides[k]) + 1] = overrides[k + 1]
    return out


def train_cmd(a, name):
    if name in FINETUNES:
        init = FINETUNES[name].format(out=a.out)
        args = FINETUNE_PPO_ARGS if name.startswith("finetune-ppo-") else FINETUNE_ARGS
        return with_overrides([a.cagr, "train", "--seed", str(a.seed), "--threads", str(a.threads), "--finetune", init] +
                              args, FINETUNE_OVERRIDES.get(name, [])) + ["-o", f"{a.out}/{name}.rlp"]
    return [a.cagr, "train", "--seed", str(a.seed), "--updates", str(a.updates), "--threads", str(a.threads)] + \
        (["--eval-synthetic"] if a.eval_synthetic else []) + VARIANTS[name][1] + ["-o", f"{a.out}/{name}.rlp"]


def train_one(a, name):
    path = f"{a.out}/{name}.rlp"
    meta_path = f"{a.out}/{name}.train.json"
    if os.path.exists(path) and os.path.exists(meta_path):
        return json.load(open(meta_path))
    cmd = train_cmd(a, name)
    t0 = time.time()
    with open(f"{a.out}/{name}.log", "w") as log:
        p = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT)
    wall = time.time() - t0
    if p.returncode != 0:
        sys.exit(f"training {name} failed (exit {p.returncode}); see {a.out}/{name}.log")
    lines = open(f"{a.out}/{name}.log").read().splitlines()
    done = [l for l in lines if l.startswith("[done]")]
    evals = [l for l in lines if l.startswith("[eval")]
    meta = {"name": name, "command": " ".join(shlex.quote(c) for c in cmd), "train_wall_seconds_measured": wall,
            "selected": done[-1] if done else "", "last_eval": evals[-1] if evals else "",
            "ppo_updates": sum(1 for l in lines if l.startswith("[ppo "))}
    json.dump(meta, open(meta_path, "w"), indent=1)
    print(f"trained {name} in {wall:.0f} s (measured): {meta['selected']}", flush=True)
    return meta


def eval_cells(a, policy, cells, policies):
    """Runs `policies` on every (model, platform) cell, `a.jobs` processes at a time."""
    def one(job):
        (model, plat), pol = job
        return (model, plat, pol, rleval.run_cell(a.cagr, model, plat, pol, a.batch, policy))
    jobs = [(c, p) for c in cells for p in policies]
    out = {}
    with ThreadPoolExecutor(a.jobs) as ex:
        for model, plat, pol, r in ex.map(one, jobs):
            if "error" in r:
                sys.exit(f"{model} on {plat}, {pol} ({policy}): {r['error']}")
            out.setdefault(f"{model}/{plat}", {})[pol] = r
    return out


def all_cells(a):
    return [(m, p) for m in a.models.split(",") for p in a.platforms.split(",")]


def evaluate(a, names):
    search_path = f"{a.out}/search.json"
    if not os.path.exists(search_path):
        t0 = time.time()
        json.dump(eval_cells(a, "", all_cells(a), SEARCH), open(search_path, "w"), indent=1)
        print(f"search policies evaluated in {time.time() - t0:.0f} s", flush=True)
    for name in names:
        path = f"{a.out}/eval_{name}.json"
        if os.path.exists(path):
            continue
        policy = "policies/default.rlp" if name == "default" else f"{a.out}/{name}.rlp"
        # Fine-tuned policies are for tpu-v4 only.
        cells = [c for c in all_cells(a) if (name not in FINETUNES and name != EXTRA_START) or c[1] == "tpu-v4"]
        t0 = time.time()
        json.dump(eval_cells(a, policy, cells, ["rl"]), open(path, "w"), indent=1)
        print(f"evaluated {name} in {time.time() - t0:.0f} s", flush=True)


def rows_for(a, name):
    """run.py-style rows (none, greedy, beam:8, rl) for one policy."""
    search = json.load(open(f"{a.out}/search.json"))
    ev = json.load(open(f"{a.out}/eval_{name}.json"))
    rows = []
    for key, r in ev.items():
        model, plat = key.split("/")
        row = {"model": model, "platform": plat, "unseen_model": model in rleval.UNSEEN_MODELS, **search[key],
               "rl": r["rl"]}
        rows.append(row)
    return rows


def share(r, pol="rl"):
    g = rleval.gain(r, "beam:8")
    return rleval.gain(r, pol) / g if g > 0 else None


def speedup(r, pol="rl"):
    return r["none"]["latency_ms_modelled"] / r[pol]["latency_ms_modelled"]


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else float("nan")


def wtl(rows, pol="rl", ref="greedy"):
    w = sum(1 for r in rows if r[pol]["latency_ms_modelled"] < r[ref]["latency_ms_modelled"] * (1 - 1e-4))
    l = sum(1 for r in rows if r[pol]["latency_ms_modelled"] > r[ref]["latency_ms_modelled"] * (1 + 1e-4))
    return w, len(rows) - w - l, l


def stats(rows, pol="rl"):
    shares = [(share(r, pol), f"{r['model']}/{r['platform']}") for r in rows if share(r, pol) is not None]
    worst = min(shares) if shares else (float("nan"), "-")
    unseen = [r for r in rows if r["unseen_model"]]
    return {"cells": len(rows), "mean_share_of_beam_gain": mean(s for s, _ in shares),
            "mean_share_unseen_models": mean(share(r, pol) for r in unseen),
            "worst_share": worst[0], "worst_cell": worst[1],
            "vs_greedy_win_tie_loss": wtl(rows, pol), "mean_speedup_over_none": mean(speedup(r, pol) for r in rows),
            "mean_variance_modelled": mean(r[pol].get("variance_modelled") for r in rows),
            "mean_latency_over_beam": mean(r[pol]["latency_ms_modelled"] / r["beam:8"]["latency_ms_modelled"]
                                           for r in rows),
            "pooled_gain_ms": sum(rleval.gain(r, pol) for r in rows)}


def how_trained(n):
    """The tpu-v4 table's 'tpu-v4 in training' column."""
    fixed = {"with-tpu-v4": "yes (all updates)", "baseline": "no", "default": "no", "train-v100": "no",
             "train-v100-mi100-tpu-v3": "no", EXTRA_START: "no (--few-shot-from)"}
    if n in fixed:
        return fixed[n]
    init = os.path.basename(FINETUNES[n]).replace(".rlp", "")
    seed = dict(zip(*[iter(FINETUNE_OVERRIDES.get(n, ["--seed", "1"]))] * 2))["--seed"]
    how = "20 PPO episodes" if n.startswith("finetune-ppo-") else "6 beam(8) + 14 PPO episodes"
    return f"{how}, from {init}, --seed {seed}"


def few_shot_summary(ratios, js):
    """Both few-shot recipes over seeds 1-5 from each starting policy: the worst and the mean share of the
    in-platform gain."""
    out = ["", "Few-shot over seeds " + ", ".join(str(k) for k in FEW_SHOT_SEEDS) +
           " (share of the in-platform policy's tpu-v4 gain, modelled; goal >= 85%):", ""]
    js["few_shot_seeds"] = {}
    for start, what in (("train-v100", "the {v100} policy"), (EXTRA_START, "--few-shot-from's policy")):
        for kind, label in (("", "6 beam(8) rollouts imitated + 14 PPO episodes (the documented recipe)"),
                            ("-ppo", "20 PPO episodes, no imitation (the earlier recipe)")):
            rs = [ratios.get(f"finetune{kind}-{start}{seed_suffix(k)}") for k in FEW_SHOT_SEEDS]
            rs = [r for r in rs if r is not None]
            if not rs:
                continue
            js["few_shot_seeds"][f"{start}: {label}"] = rs
            out.append(f"- from {what}, {label}: worst {pct(min(rs))}, mean {pct(mean(rs))}, per seed " +
                       " / ".join(pct(r) for r in rs) + f" (zero-shot: {pct(ratios.get(start, float('nan')))})")
    return out


def finetune_table(a, js):
    """Every fine-tuning run's greedy mean return on the 6 tpu-v4 training cells, before and after, from its log."""
    md = ["", "### Few-shot runs by their training logs", "",
          "The greedy policy's mean return (modelled reward, lambda_m 0.1, lambda_c 0.2) on the 6 zoo training "
          "models on tpu-v4, as `cagr train` evaluates it before fine-tuning, after imitation (where there is one) "
          "and after the last PPO update; seeds 2-5 repeat the {v100} fine-tunings with another --seed (only the "
          "seed changes).", "",
          "| run | seed | before | after imitation | after 20 episodes | kept |", "|---|---|---|---|---|---|"]
    js["finetune_log_returns"] = {}
    for n in FINETUNES:
        path = f"{a.out}/{n}.log"
        if not os.path.exists(path):
            continue
        ret = {}
        for l in open(path):
            if l.startswith("[eval "):
                ret[l[6:l.index("]")]] = float(l.split("mean return ")[1].split()[0])
        seed = dict(zip(*[iter(FINETUNE_OVERRIDES.get(n, ["--seed", str(a.seed)]))] * 2))["--seed"]
        after = [v for k, v in ret.items() if k.startswith("after update")]
        best = max([v for k, v in ret.items() if k != "initial weights"], default=-1)
        kept = "initial weights" if best <= ret.get("initial weights", 0) else "fine-tuned"
        js["finetune_log_returns"][n] = ret
        bc = f"{ret['after imitation']:.4f}" if "after imitation" in ret else "-"
        md.append(f"| {n} | {seed} | {ret.get('initial weights', float('nan')):.4f} | {bc} | "
                  f"{after[-1] if after else float('nan'):.4f} | {kept} |")
    return md


def slim(js, names):
    """The report's JSON: the search policies' cells once, then each policy's `rl` cells."""
    out = {k: v for k, v in js.items() if k not in ("rows", "stats", "training")}
    out["training"] = {n: js["training"][n] for n in names if n in js["training"]}
    out["stats"] = {n: js["stats"][n] for n in names}
    first = js["rows"][names[0]] if names else []
    out["search_cells"] = {f"{r['model']}/{r['platform']}": {p: r[p] for p in SEARCH} for r in
                           (js["rows"]["default"] if "default" in js["rows"] else first)}
    out["rl_cells"] = {n: {f"{r['model']}/{r['platform']}": r["rl"] for r in js["rows"][n]} for n in names}
    return out


def pct(x):
    return "n/a" if x != x else f"{100 * x:.1f}%"


def header(a, title):
    return [f"# {title}", "",
            f"Every latency and variance here is **modelled**: roofline cost model at batch {a.batch} on each "
            "platform's built-in datasheet profile (src/hw/profiles/{" + a.platforms + "}.json; x86-64 is a generic "
            "stand-in, not this host). V_H is the cost model's relative run-to-run standard deviation of a plan (the "
            "reward's lambda_c term; `cagr optimize --json` reports it as `variance`). Training wall times are "
            f"**measured** on this host ({host.machine()}, {os.cpu_count()} vCPU, shared with other builds). "
            "`rl` runs each policy greedily (`cagr optimize --policy rl:FILE`); none, greedy and beam:8 are run once "
            "with the reward's defaults (lambda_m 0.1, lambda_c 0.2). Training and evaluation used one build "
            f"({a.cagr}, built from the tree of commit {a.tree}); a change to the cost model or the rewrite engine "
            "changes these numbers.", "",
            f"**Budget**: every trained variant, the default-recipe baseline included, ran exactly {a.updates} PPO "
            f"updates with --seed {a.seed} (reproducible, no wall-clock limit), so they compare like with like; "
            "`policies/default.rlp` (150 updates) is shown for reference only. Share of beam gain = the policy's "
            "modelled latency reduction over none / beam(8)'s, per cell (over 100% where it finds a faster plan "
            "than beam, which maximises the whole reward); means are over cells with a beam gain. "
            + ("Each training keeps the weights with the best evaluation return over all its training graphs, "
               "synthetic ones included (`--eval-synthetic`, as the default policy's stage 2)."
               if a.eval_synthetic else "Each training keeps the weights with the best evaluation return on the "
               "zoo cells only (no `--eval-synthetic`)."), ""]


def commands(a, names, metas):
    out = ["## Commands", "", "```",
           f"python3 bench/rl/ablate.py --cagr {a.cagr} --updates {a.updates} --parallel {a.parallel} "
           f"--threads {a.threads} --jobs {a.jobs} --out {a.out}"
           + ("" if a.eval_synthetic else " --no-eval-synthetic")]
    out += [metas[n]["command"] for n in names if n in metas]
    out += ["```", ""]
    return out


def report(a, metas):
    rows = {n: rows_for(a, n) for n in ["default"] + list(VARIANTS) + list(FINETUNES) + [EXTRA_START]
            if os.path.exists(f"{a.out}/eval_{n}.json")}
    st = {n: stats(r) for n, r in rows.items()}
    ref = rows.get("baseline") or next(iter(rows.values()))
    js = {"updates": a.updates, "seed": a.seed, "batch": a.batch, "latency_kind": "modelled",
          "profiles": [f"src/hw/profiles/{p}.json" for p in a.platforms.split(",")],
          "training": metas, "stats": st,
          "reference": {p: stats(ref, p) for p in ("greedy", "beam:8")}, "rows": rows}

    # --- ablations ---
    abl = [n for n in ["baseline", "no-film", "lambda-c-0", "lambda-c-0.5", "no-imitation", "no-curriculum",
                       "default"] if n in st]
    md = header(a, "RL policy ablations (issue 7, item 4)")
    md += commands(a, [n for n in abl if n != "default"], metas)
    md += ["## Ablations", "",
           "All 72 cells (8 zoo models x 9 platforms); unseen models = autoint, ngcf (18 cells; no variant trained "
           "on them); tpu-v4 is outside every variant's training set. W/T/L: cells where the policy's plan is "
           "faster / equal (within 0.01%) / slower than greedy's. Speed-up = mean over cells of none / policy "
           "latency; latency / beam = mean over cells of the policy's latency / beam(8)'s (less swayed than the share by "
           "cells where beam gains little, e.g. x86-64). V_H = mean over cells of the final plan's modelled "
           "run-to-run std.", "",
           "| variant | what changes | train s (measured) | mean share of beam gain | unseen-model cells | worst cell "
           "| vs greedy W/T/L | mean speed-up | latency / beam | mean V_H |", "|---|---|---|---|---|---|---|---|---|---|"]
    for n in abl:
        s = st[n]
        what = VARIANTS[n][3] if n in VARIANTS else "the committed policy, 150 updates (reference)"
        t = f"{metas[n]['train_wall_seconds_measured']:.0f}" if n in metas else "-"
        md.append(f"| {n} | {what} | {t} | {pct(s['mean_share_of_beam_gain'])} | "
                  f"{pct(s['mean_share_unseen_models'])} | {pct(s['worst_share'])} ({s['worst_cell']}) | "
                  "{} / {} / {} | ".format(*s['vs_greedy_win_tie_loss']) +
                  f"{s['mean_speedup_over_none']:.3f}x | {s['mean_latency_over_beam']:.4f} | "
                  f"{pct(s['mean_variance_modelled'])} |")
    for p in ("greedy", "beam:8"):
        s = js["reference"][p]
        md.append(f"| ({p}) | search policy | - | {pct(s['mean_share_of_beam_gain'])} | "
                  f"{pct(s['mean_share_unseen_models'])} | - | - | {s['mean_speedup_over_none']:.3f}x | "
                  f"{s['mean_latency_over_beam']:.4f} | {pct(s['mean_variance_modelled'])} |")
    md.append(f"| (none) | unoptimized plan | - | - | - | - | - | 1.000x | - | "
              f"{pct(mean(r['none'].get('variance_modelled') for r in ref))} |")
    lam = [n for n in ["lambda-c-0", "baseline", "lambda-c-0.5"] if n in st]
    if lam:
        md += ["", "### lambda_c: mean and variance of latency", "",
               "Mean modelled latency relative to none (mean over cells of policy / none), and the modelled "
               "run-to-run std V_H: mean, and the largest over cells, of the final plans; 'V_H up' counts cells "
               "where the plan's V_H is above the unoptimized plan's.", "",
               "| lambda_c | variant | mean latency / none | mean V_H | max V_H | V_H up (cells) |", "|---|---|---|---|---|---|"]
        for n in lam:
            rs = rows[n]
            lc = {"lambda-c-0": "0", "baseline": "0.2", "lambda-c-0.5": "0.5"}[n]
            up = sum(1 for r in rs if r["rl"].get("variance_modelled", 0) > r["none"].get("variance_modelled", 0) + 1e-12)
            md.append(f"| {lc} | {n} | {mean(1 / speedup(r) for r in rs):.4f} | "
                      f"{pct(st[n]['mean_variance_modelled'])} | {pct(max(r['rl'].get('variance_modelled', 0) for r in rs))} "
                      f"| {up} / {len(rs)} |")
    with open(a.md_ablations, "w") as f:
        f.write("\n".join(md) + "\n")
    with open(a.json_ablations, "w") as f:
        json.dump(slim(js, abl), f, indent=1)

    # --- generalization, left-out platform, few-shot ---
    gen = [n for n in ["train-v100", "train-v100-mi100", "train-v100-mi100-tpu-v3", "baseline", "with-tpu-v4",
                       "default"] if n in st]
    plats = a.platforms.split(",")
    md = header(a, "RL policy generalization across platforms (issue 7, items 4-6)")
    md += commands(a, [n for n in gen + list(FINETUNES) if n != "default"], metas)
    md += ["## Train on a few platforms, test on every platform", "",
           "Each cell: mean over the 8 zoo models of the modelled speed-up over none, then the mean share of "
           "beam(8)'s gain. * = a platform outside that policy's training set.", "",
           "| trained on | " + " | ".join(plats) + " | mean (seen) | mean (left out) |",
           "|---" * (len(plats) + 3) + "|"]
    for n in gen:
        seen = set(VARIANTS[n][2].split(",")) if n in VARIANTS else set(DEFAULT_PLATFORMS.split(","))
        cells, seen_sh, out_sh = [], [], []
        for p in plats:
            rs = [r for r in rows[n] if r["platform"] == p]
            sh = mean(share(r) for r in rs)
            (seen_sh if p in seen else out_sh).append(sh)
            cells.append(f"{mean(speedup(r) for r in rs):.2f}x / {pct(sh)}{'' if p in seen else '*'}")
        label = {"baseline": "8 platforms (default recipe)", "with-tpu-v4": "all 9",
                 "default": "8 platforms (policies/default.rlp, 150 updates)"}.get(n, "{" + VARIANTS.get(n, ("", "", ""))[2] + "}")
        md.append(f"| {label} | " + " | ".join(cells) + f" | {pct(mean(seen_sh))} | {pct(mean(out_sh))} |")
    for pol in ("greedy", "beam:8"):
        md.append(f"| ({pol}) | " + " | ".join(
            f"{mean(speedup(r, pol) for r in ref if r['platform'] == p):.2f}x / "
            f"{pct(mean(share(r, pol) for r in ref if r['platform'] == p))}" for p in plats) + " | - | - |")
    # tpu-v4
    if "with-tpu-v4" in rows:
        inplat = {r["model"]: r for r in rows["with-tpu-v4"] if r["platform"] == "tpu-v4"}
        g_in = sum(rleval.gain(r, "rl") for r in inplat.values())
        md += ["", "## tpu-v4: left out, and few-shot fine-tuning", "",
               "The in-platform policy is `with-tpu-v4` (the default recipe with tpu-v4 added, same budget). "
               "Ratio = a policy's modelled latency reduction over none on tpu-v4, summed over the 8 zoo models, "
               "divided by the in-platform policy's, and the mean over the models of the same ratio per model; W/T/L "
               "counts models where the policy's plan is faster / equal / slower than the in-platform policy's. "
               "Fine-tuning (`finetune-*`): `cagr train --finetune POLICY --platform src/hw/profiles/tpu-v4.json "
               "--synthetic 0 --updates 5 --episodes-per-platform 4 --episodes 20`: 20 episodes on tpu-v4 (zoo "
               "training models): one beam(8) rollout per model (6, each counted as an episode) imitated for 24 "
               "epochs (lr 5e-4, 16 decisions a step: --finetune's defaults), then PPO with the 14 episodes left "
               "(4 updates); `finetune-ppo-*`: the earlier recipe, the same command with --no-imitation (20 PPO "
               "episodes, 5 updates of 4). Both add the greedy evaluations on the 6 models that choose between the "
               "starting weights and the fine-tuned ones (not counted as episodes); 'weights kept' says which the "
               "file holds (the starting weights when no fine-tuned evaluation beats them). `extra-start` is the "
               "policy given by --few-shot-from, a starting point far from tpu-v4.", "",
               "| policy | tpu-v4 in training | gain ms (sum) | / in-platform gain | per-model mean | "
               "share of beam gain | vs in-platform W/T/L | weights kept |", "|---|---|---|---|---|---|---|---|"]
        ratios = {}
        for n in ["with-tpu-v4", "baseline", "default", "finetune-baseline", "finetune-default", "train-v100"] + \
                [n for n in FINETUNES if "train-v100" in n and "tpu-v3" not in n] + \
                ["train-v100-mi100-tpu-v3", "finetune-train-v100-mi100-tpu-v3", EXTRA_START] + \
                [n for n in FINETUNES if EXTRA_START in n]:
            if n not in rows:
                continue
            rs = [r for r in rows[n] if r["platform"] == "tpu-v4"]
            g = sum(rleval.gain(r, "rl") for r in rs)
            ratios[n] = g / g_in if g_in > 0 else float("nan")
            per = mean(rleval.gain(r, "rl") / rleval.gain(inplat[r["model"]], "rl")
                       for r in rs if rleval.gain(inplat[r["model"]], "rl") > 0)
            w, t, l = wtl([dict(r, ref=inplat[r["model"]]["rl"]) for r in rs], "rl", "ref")
            sel = metas.get(n, {}).get("selected", "")
            sel = sel[sel.rfind("(") + 1:-1] if sel.endswith(")") else "-"
            md.append(f"| {n} | {how_trained(n)} | {g:.4f} | {pct(ratios[n])} | {pct(per)} | "
                      f"{pct(mean(share(r) for r in rs))} | {w} / {t} / {l} | {sel} |")
        md += few_shot_summary(ratios, js)
        js["tpu_v4_in_platform_gain_ms"] = g_in
        md += finetune_table(a, js)
    with open(a.md_generalization, "w") as f:
        f.write("\n".join(md) + "\n")
    with open(a.json_generalization, "w") as f:
        json.dump(slim(js, gen + [n for n in list(FINETUNES) + [EXTRA_START] if n in rows]), f, indent=1)
    print("\n".join(md))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cagr", default="build-rl/cagr")
    ap.add_argument("--out", default="build-rl/ablate", help="policies, logs and evaluations (git-ignored)")
    ap.add_argument("--updates", type=int, default=60, help="PPO updates for every trained variant")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-eval-synthetic", dest="eval_synthetic", action="store_false",
                    help="keep each variant's weights by its return on the zoo cells only (the recipe before "
                    "cc0281d); by default `cagr train --eval-synthetic`, as the default policy's stage 2")
    ap.add_argument("--threads", type=int, default=1, help="--threads of each training")
    ap.add_argument("--parallel", type=int, default=2, help="trainings at a time")
    ap.add_argument("--jobs", type=int, default=2, help="cagr optimize processes at a time when evaluating")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--models", default=",".join(rleval.MODELS))
    ap.add_argument("--platforms", default=",".join(rleval.PLATFORMS))
    ap.add_argument("--only", help="variants to train/evaluate (default: all)")
    ap.add_argument("--tree", default=subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                                     text=True).stdout.strip(),
                    help="the commit the build was made from, for the report (default: HEAD)")
    ap.add_argument("--stage", default="all", choices=["train", "eval", "report", "all"])
    ap.add_argument("--md-ablations", default="bench/results/rl_ablations.md")
    ap.add_argument("--json-ablations", default="bench/results/rl_ablations.json")
    ap.add_argument("--md-generalization", default="bench/results/rl_generalization.md")
    ap.add_argument("--json-generalization", default="bench/results/rl_generalization.json")
    ap.add_argument("--few-shot-from", help="also fine-tune from this policy (copied to OUT/extra-start.rlp), both "
                    "recipes, seeds 1-5: a starting point far from tpu-v4")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.few_shot_from or os.path.exists(f"{a.out}/{EXTRA_START}.rlp"):
        if a.few_shot_from and not os.path.exists(f"{a.out}/{EXTRA_START}.rlp"):
            shutil.copyfile(a.few_shot_from, f"{a.out}/{EXTRA_START}.rlp")
        add_extra_start()
    names = [n for g in a.only.split(",") for n in GROUPS.get(g, [g])] if a.only else list(VARIANTS) + list(FINETUNES)
    for n in names:
        if n not in VARIANTS and n not in FINETUNES and n not in ("default", EXTRA_START):
            sys.exit(f"unknown variant '{n}' (known: {', '.join(list(VARIANTS) + list(FINETUNES))}, default)")
    trained = [n for n in names if n not in ("default", EXTRA_START)]
    if a.stage in ("train", "all"):
        # Fine-tuning from the baseline needs the baseline first.
        first = [n for n in trained if n not in FINETUNES]
        with ThreadPoolExecutor(a.parallel) as ex:
            list(ex.map(lambda n: train_one(a, n), first))
        for n in trained:
            if n in FINETUNES:
                init = FINETUNES[n].format(out=a.out)
                if not os.path.exists(init):
                    print(f"skipping {n}: its starting policy {init} is not there (train it first)", flush=True)
                    continue
                train_one(a, n)
    if a.stage in ("eval", "all"):
        evaluate(a, ["default"] + [n for n in trained + [EXTRA_START] if os.path.exists(f"{a.out}/{n}.rlp")])
    if a.stage in ("report", "all"):
        metas = {n: json.load(open(f"{a.out}/{n}.train.json")) for n in list(VARIANTS) + list(FINETUNES)
                 if os.path.exists(f"{a.out}/{n}.train.json")}
        report(a, metas)


if __name__ == "__main__":
    main()
