#!/usr/bin/env python3
"""Cost-model accuracy against CAGR's own CUDA plans (issue 3, H200).

For every zoo model and batch, `cagr bench --target cuda --json --breakdown
--hw PROFILE` compiles the unoptimized plan (policy none) and the greedy plan
on the CUDA backend, times both as CUDA-graph replays (measured, CUDA
events), times each plan step by step (measured, CUDA events around each
step issued alone, no graph), and prices both plans and every kernel with
the roofline cost model and PROFILE (modelled). This script scores modelled
vs measured: MAPE and Spearman end to end (graph replays) and per kernel
class (steps).

Measuring (on the GPU machine) and rendering (anywhere) can be split:

  # on the H200: one JSON per (model, batch) into DIR, and the report
  python3 bench/cost_model_accuracy/cuda_plans.py --hw h200-probed.json --cagr .devbundle/cagr \\
      --batches 256,4096 --json-dir DIR --out DIR/cost_model_cuda_plans.md
  # here, from those files:
  python3 bench/cost_model_accuracy/cuda_plans.py --from-json DIR --hw bench/results/hw/h200-probed.json \\
      --out bench/results/cost_model_cuda_plans.md

Re-pricing the measured plans with another build's cost model (no GPU):

  # once, with the build whose cost model chose the measured greedy plans:
  # writes each plan (.cagr) and checks its decisions and modelled latency
  # match the JSON (the plan is reproducible from model + profile + batch)
  python3 bench/cost_model_accuracy/cuda_plans.py --from-json DIR --hw PROFILE --cagr OLD/cagr --write-plans PLANS
  # then, with any build: modelled now (cagr inspect --hw on the same plans)
  # vs measured earlier (the JSONs)
  python3 bench/cost_model_accuracy/cuda_plans.py --from-json DIR --hw PROFILE --cagr NEW/cagr --reprice PLANS --out X.md

Writes OUT (.md) and OUT with .json (every point and kernel record).
"""
import argparse
import glob
import json
import os
import subprocess
import sys

from report import spearman  # noqa: E402  (same folder; one rank-correlation for every report)

MODELS = ["dlrm_criteo", "dlrm_avazu", "deepfm", "xdeepfm", "dcnv2", "wide_deep", "autoint", "ngcf"]


def mape(pred, meas):
    pts = [(p, m) for p, m in zip(pred, meas) if m > 0]
    return 100 * sum(abs(p - m) / m for p, m in pts) / len(pts) if pts else float("nan")


def single_step_floor_ms(profile_path):
    """The profile's single-step floor (launch.single), ms, or None."""
    if not profile_path or not os.path.exists(profile_path):
        return None, None
    p = json.load(open(profile_path))
    single = graph = None
    for e in p.get("efficiencies", []):
        if e.get("kernel") == "cagr.graph_step" and e.get("shape_class") == "launch.single":
            single = e.get("overhead_s", 0) * 1e3
        if e.get("kernel") == "cagr.graph_step" and e.get("shape_class") == "launch.graph":
            graph = e.get("overhead_s", 0) * 1e3
    return single, graph


def measure(args):
    """Runs cagr bench for every (model, batch); returns the parsed JSONs."""
    runs, failures = [], []
    if args.json_dir:
        os.makedirs(args.json_dir, exist_ok=True)
    for model in args.models.split(","):
        for batch in [int(b) for b in args.batches.split(",")]:
            cmd = [args.cagr, "bench", f"zoo/onnx/{model}.dynamo.onnx", "--target", "cuda", "--hw", args.hw, "--batch",
                   str(batch), "--policy", "greedy", "--json", "--breakdown"]
            print(" ".join(cmd), file=sys.stderr, flush=True)
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
            if p.returncode != 0:
                why = (p.stderr or p.stdout).strip().splitlines()
                failures.append({"model": model, "batch": batch, "error": why[-1] if why else f"exit {p.returncode}"})
                print(f"  failed: {failures[-1]['error']}", file=sys.stderr)
                continue
            j = json.loads(p.stdout)
            j["_command"] = " ".join(cmd)
            runs.append(j)
            if args.json_dir:
                with open(os.path.join(args.json_dir, f"{model}.b{batch}.json"), "w") as f:
                    json.dump(j, f, indent=1)
    return runs, failures


def load(paths):
    runs = []
    for p in paths:
        files = sorted(glob.glob(os.path.join(p, "*.json"))) if os.path.isdir(p) else [p]
        for f in files:
            j = json.load(open(f))
            if isinstance(j, dict) and j.get("target") == "cuda" and "latency_ms" in j:
                j.setdefault("_command", f"(from {f})")
                runs.append(j)
    return runs


def plan_path(plans_dir, j):
    return os.path.join(plans_dir, f"{model_name(j)}.b{j['batch']}.cagr")


def run_json(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        why = (p.stderr or p.stdout).strip().splitlines()
        raise SystemExit(f"{' '.join(cmd)}: {why[-1] if why else f'exit {p.returncode}'}")
    return json.loads(p.stdout)


def write_plans(args, runs):
    """Rebuilds every measured greedy plan (fp32, as `cagr bench` without
    --precision) and checks it is the plan that was measured."""
    os.makedirs(args.write_plans, exist_ok=True)
    bad = 0
    for j in runs:
        if j.get("precision", "fp32") != "fp32":
            raise SystemExit(f"{model_name(j)} b{j['batch']}: precision {j.get('precision')} not supported here")
        out = plan_path(args.write_plans, j)
        o = run_json([args.cagr, "optimize", j["model"], "--hw", args.hw, "--batch", str(j["batch"]), "--policy",
                      j.get("policy", "greedy"), "--fp32", "--json", "-o", out])
        same = [d["label"] for d in o["decisions"]] == [d["label"] for d in j.get("decisions", [])]
        close = abs(o["latency_ms"] - j["modelled_latency_ms"]) <= 1e-9 + 1e-6 * j["modelled_latency_ms"]
        ok = same and close
        if not ok:  # not the measured plan: --reprice leaves this greedy point out (its unoptimized one stays)
            os.remove(out)
            bad += 1
        print(f"{model_name(j)} b{j['batch']}: decisions {'same' if same else 'DIFFER'}, modelled "
              f"{o['latency_ms']:.6f} vs stored {j['modelled_latency_ms']:.6f} ms -> "
              f"{out if ok else 'SKIPPED (not the measured plan; not written)'}", file=sys.stderr)
    if bad:
        print(f"{bad} plan(s) differ from the measured ones and were skipped (not written); --reprice leaves their "
              "greedy points out", file=sys.stderr)


def reprice(args, runs):
    """Prices the measured plans (and their unoptimized graphs) with this
    build's cost model: modelled now vs measured earlier."""
    for j in runs:
        path = plan_path(args.reprice, j)
        hw = ["--hw", args.hw, "--batch", str(j["batch"]), "--json"]
        j["modelled_latency_ms_stored"] = j["modelled_latency_ms"]
        if os.path.exists(path):
            j["modelled_latency_ms"] = run_json([args.cagr, "inspect", path] + hw)["latency_ms"]
        else:  # --write-plans skipped it (not the measured plan) or was not run
            print(f"{model_name(j)} b{j['batch']}: no plan {path} (skipped by --write-plans: not the measured plan); "
                  f"its {j.get('policy', 'greedy')} point is left out", file=sys.stderr)
            j["_skipped_plan"] = True
        j["baseline_modelled_latency_ms_stored"] = j["baseline_modelled_latency_ms"]
        j["baseline_modelled_latency_ms"] = run_json([args.cagr, "inspect", j["model"]] + hw)["latency_ms"]
        j["_repriced"] = True
    return runs


def model_name(j):
    m = os.path.basename(j.get("model", "?"))
    return m.split(".")[0]


def score(runs, single_ms, graph_ms):
    plans, kernels = [], []
    for j in runs:
        m, b = model_name(j), j["batch"]
        plans.append({"model": m, "batch": b, "plan": "none", "modelled_ms": j["baseline_modelled_latency_ms"],
                      "measured_ms": j["baseline_latency_ms"]})
        if not j.get("_skipped_plan"):
            plans.append({"model": m, "batch": b, "plan": j.get("policy", "greedy"),
                          "modelled_ms": j["modelled_latency_ms"], "measured_ms": j["latency_ms"]})
        for side, plan in (("unoptimized", "none"), ("optimized", j.get("policy", "greedy"))):
            bd = j.get("breakdown", {}).get(side, {})
            for k in bd.get("modelled_kernels", []):
                rec = {"model": m, "batch": b, "plan": plan, "kernel": k["kernel"], "shape_class": k["shape_class"],
                       "steps": k["steps"], "modelled_ms": k["modelled_ms"], "measured_ms": k["measured_ms"]}
                # The steps are timed issued one by one: compare with the
                # single-step floor in place of the graph floor where measured.
                rec["modelled_single_ms"] = (k["modelled_ms"] - k["modelled_launch_ms"] + single_ms
                                             if single_ms is not None and graph_ms is not None else k["modelled_ms"])
                kernels.append(rec)
    return plans, kernels


def klass(k):
    c = k["shape_class"] or k["kernel"]
    return f"{k['kernel']} / {c}"


def render(args, runs, failures):
    single_ms, graph_ms = single_step_floor_ms(args.hw)
    plans, kernels = score(runs, single_ms, graph_ms)
    device = runs[0].get("device", "?") if runs else "?"
    profile = runs[0].get("profile", args.hw) if runs else args.hw
    pred = [p["modelled_ms"] for p in plans]
    meas = [p["measured_ms"] for p in plans]
    lines = ["# Cost model vs CAGR's own CUDA plans (modelled vs measured on the H200)", "",
             f"Modelled: the roofline cost model with profile `{profile}` (`--hw {args.hw}`). Measured: `cagr bench "
             f"--target cuda` on {device}: end to end, the median CUDA-graph replay of each plan (CUDA events); per "
             "kernel, CUDA events around each step issued one by one (no graph), joined with the modelled kernel of "
             "the step's first node.", ""]
    if runs and runs[0].get("_repriced"):
        lines += [f"**Re-priced: end to end, modelled now by `{args.cagr}` (cagr inspect --hw on the plans in "
                  f"`{args.reprice}`, the same plans as measured) vs measured earlier (the JSONs); the per-kernel table "
                  "below is still the modelled side stored in the JSONs.**", ""]
        skipped = [f"{model_name(j)} b{j['batch']}" for j in runs if j.get("_skipped_plan")]
        if skipped:
            lines += [f"Left out (greedy plan not reproducible with the measuring build, see --write-plans): "
                      f"{', '.join(skipped)}; their unoptimized plans are kept.", ""]
    lines += [
             "Command: `python3 bench/cost_model_accuracy/cuda_plans.py --hw " + str(args.hw) + " --batches " +
             args.batches + "`" + (" (rendered with --from-json)" if args.from_json else ""), ""]
    if not plans:
        lines.append("No measurements: no `cagr bench --target cuda` JSON was read.")
    else:
        lines += [f"**End to end: MAPE {mape(pred, meas):.1f} %, Spearman {spearman(pred, meas):.3f} over "
                  f"{len(plans)} plans** (modelled vs measured).", ""]
        for name, sel in (("none plans", lambda p: p["plan"] == "none"), ("greedy plans", lambda p: p["plan"] != "none"),
                          ("batch 4096", lambda p: p["batch"] == 4096)):
            sub = [p for p in plans if sel(p)]
            if sub:
                lines.append(f"- {name}: MAPE {mape([p['modelled_ms'] for p in sub], [p['measured_ms'] for p in sub]):.1f} %"
                             f" over {len(sub)}")
        lines += ["", "| model | batch | plan | modelled ms | measured ms | error % |", "|---|---|---|---|---|---|"]
        for p in plans:
            err = 100 * (p["modelled_ms"] - p["measured_ms"]) / p["measured_ms"] if p["measured_ms"] else float("nan")
            lines.append(f"| {p['model']} | {p['batch']} | {p['plan']} | {p['modelled_ms']:.4f} | "
                         f"{p['measured_ms']:.4f} | {err:+.1f} |")
    if kernels:
        note = (f"modelled with the single-step floor {single_ms * 1e3:.2f} us in place of the graph floor "
                f"{graph_ms * 1e3:.2f} us (the steps are timed one by one)" if single_ms is not None and graph_ms
                is not None else "modelled as priced in the plan")
        lines += ["", f"## Per kernel class ({note})", "",
                  "| kernel / class | n | modelled / measured (sums) | MAPE % | Spearman | measured ms (sum) |",
                  "|---|---|---|---|---|---|"]
        groups = {}
        for k in kernels:
            groups.setdefault(klass(k), []).append(k)
        allp = [k["modelled_single_ms"] for k in kernels]
        allm = [k["measured_ms"] for k in kernels]
        for name, ks in sorted(groups.items(), key=lambda kv: -sum(k["measured_ms"] for k in kv[1])):
            p = [k["modelled_single_ms"] for k in ks]
            m = [k["measured_ms"] for k in ks]
            ratio = sum(p) / sum(m) if sum(m) > 0 else float("nan")
            lines.append(f"| {name} | {len(ks)} | {ratio:.2f} | {mape(p, m):.1f} | {spearman(p, m):.3f} | {sum(m):.3f} |")
        lines.append(f"| all kernels | {len(kernels)} | {sum(allp) / sum(allm):.2f} | {mape(allp, allm):.1f} | "
                     f"{spearman(allp, allm):.3f} | {sum(allm):.3f} |")
    if failures:
        lines += ["", "Did not run on the CUDA backend:", ""]
        lines += [f"- {f['model']} batch {f['batch']}: {f['error']}" for f in failures]
    text = "\n".join(lines) + "\n"
    with open(args.out, "w") as f:
        f.write(text)
    base = os.path.splitext(args.out)[0]
    with open(base + ".json", "w") as f:
        json.dump({"kind": "modelled (roofline cost model) vs measured (CUDA backend)", "profile": args.hw,
                   "device": device, "plans": plans, "kernels": kernels, "failures": failures,
                   "commands": [j.get("_command") for j in runs]}, f, indent=1)
    print(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hw", required=True, help="GPU profile the plans are priced with (cagr profile --target cuda)")
    ap.add_argument("--cagr", default="build/cagr")
    ap.add_argument("--batches", default="256,4096")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--json-dir", help="also keep every cagr bench JSON here ({model}.b{batch}.json)")
    ap.add_argument("--from-json", nargs="+", help="render from these cagr bench JSON files / directories instead")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per cagr bench run")
    ap.add_argument("--out", default="bench/results/cost_model_cuda_plans.md")
    ap.add_argument("--write-plans", metavar="DIR", help="with --from-json: rebuild the measured plans with --cagr into "
                    "DIR (.cagr) and check they are the measured ones, then exit")
    ap.add_argument("--reprice", metavar="DIR", help="with --from-json: price the plans in DIR (from --write-plans) "
                    "with --cagr's cost model instead of the modelled numbers stored in the JSONs")
    args = ap.parse_args()
    if (args.write_plans or args.reprice) and not args.from_json:
        ap.error("--write-plans / --reprice need --from-json")
    if args.from_json:
        runs, failures = load(args.from_json), []
        fail_file = os.path.join(args.from_json[0], "failures.json") if os.path.isdir(args.from_json[0]) else None
        if fail_file and os.path.exists(fail_file):
            failures = json.load(open(fail_file))
        if args.write_plans:
            write_plans(args, runs)
            return
        if args.reprice:
            runs = reprice(args, runs)
    else:
        runs, failures = measure(args)
        if args.json_dir:  # several invocations may share one directory (e.g. split by --models)
            path = os.path.join(args.json_dir, "failures.json")
            done = {(model_name(j), j["batch"]) for j in load([args.json_dir])}
            old = json.load(open(path)) if os.path.exists(path) else []
            keep = {(f["model"], f["batch"]): f for f in old + failures if (f["model"], f["batch"]) not in done}
            with open(path, "w") as f:
                json.dump(list(keep.values()), f, indent=1)
            runs, failures = load([args.json_dir]), list(keep.values())
    render(args, runs, failures)


if __name__ == "__main__":
    main()
