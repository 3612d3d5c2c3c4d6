#!/usr/bin/env python3
"""Which third-party fixtures (zoo/thirdparty) CAGR imports, runs and matches.

  test/tools/thirdparty_check.py --cagr build/cagr [--manifest zoo/thirdparty/manifest.json]
      [--table OUT.md] [--update-expected] [--models a,b] [--jobs 2] [--json OUT.json]
      [--targets reference,cpu] [--no-plans]

For every fixture the exporter produced, every reference batch and every
target (default: the reference executor and the CPU backend), runs
`cagr run MODEL --inputs X --output Y --target T` and compares
each output with ONNX Runtime's (max abs error <= the manifest's tolerance,
1e-5). A fixture passes when every batch does; otherwise its reason is CAGR's
own error line (or the numerical mismatch), trimmed to one line. A fixture
that runs is then optimized with default flags (lossless: greedy for the CPU,
run on the CPU backend, and one more policy x target pair, rotating over the
manifest) and its plans must match too.

Exit status 1 when a fixture marked expected "pass" fails or one marked
"fail" now passes, so the manifest stays honest; --update-expected rewrites
expected/reason from this run instead. Fixtures whose export failed inside
torch (expected "skip") are listed, not run. Standard library + numpy only.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLUMNS = [("ts", 13, "dynamic"), ("ts", 13, "fixed"), ("ts", 17, "dynamic"), ("ts", 17, "fixed"),
           ("ts", 18, "dynamic"), ("ts", 18, "fixed"), ("dynamo", None, "dynamic"), ("dynamo", None, "fixed"),
           ("ts", 11, "dynamic")]
MAX_REASON = 240


def column_of(f):
    opset = f.get("requested_opset", f["opset"]) if f["exporter"] == "ts" else None
    return (f["exporter"], opset, f["batch_mode"])


def column_title(c):
    ex, opset, mode = c
    name = f"ts{opset}" if ex == "ts" else "dynamo"
    title = f"{name} {'dyn' if mode == 'dynamic' else 'b64'}"
    return title + " (dlrm's own call)" if opset == 11 else title


def trim(s):
    s = " ".join(s.split())
    return s if len(s) <= MAX_REASON else s[:MAX_REASON - 3] + "..."


def error_line(stderr, stdout, model):
    """CAGR's one-line error: the first line naming an error, else the last
    line; without the 'cagr: error: <model path>: ' prefix, so it reads the
    same on every machine and groups across fixtures."""
    lines = [ln.strip() for ln in (stderr + "\n" + stdout).splitlines() if ln.strip()]
    pick = next((ln for ln in lines if re.search(r"\berror\b|unsupported|invalid|failed", ln, re.I)),
                lines[-1] if lines else "no output")
    pick = re.sub(r"^cagr:\s*error:\s*", "", pick)
    for prefix in (model + ": ", os.path.relpath(model) + ": "):
        pick = pick.replace(prefix, "")
    return trim(pick)


def compare(ref_path, got_path, tol):
    ref, got = np.load(ref_path), np.load(got_path)
    worst = 0.0
    for name in ref.files:
        if name not in got.files:
            return False, f"output '{name}' missing from cagr's outputs {got.files}", None
        r, g = ref[name], got[name]
        if r.shape != g.shape:
            return False, f"output '{name}' shape {list(g.shape)}, ONNX Runtime gives {list(r.shape)}", None
        if r.size == 0:
            continue
        if not np.all(np.isfinite(g) == np.isfinite(r)):
            return False, f"output '{name}' has non-finite values where ONNX Runtime has none", None
        err = float(np.max(np.abs(g.astype(np.float64) - r.astype(np.float64)))) if r.size else 0.0
        worst = max(worst, err)
        if not err <= tol:
            return False, f"output '{name}' max abs error {err:.3g} > {tol:g}", err
    return True, None, worst


def check_fixture(f, cagr, base, tol, timeout, targets, plans):
    """-> dict(status, reason, batch, max_err)."""
    if f.get("export_error"):
        return {"status": "export-error", "reason": trim(f["export_error"]), "batch": None, "max_err": None}
    if not f.get("refs"):  # ORT (or PyTorch) runs no batch of it; batches ORT does run are checked
        return {"status": "ort-error", "reason": trim(f.get("ort_error") or "no reference outputs"), "batch": None,
                "max_err": None}
    model = os.path.join(base, f["onnx"])
    worst = 0.0
    with tempfile.TemporaryDirectory(prefix="tpcheck-") as tmp:
        runs = [(b, ref, t) for b, ref in sorted(f["refs"].items(), key=lambda kv: int(kv[0])) for t in targets]
        for b, ref, target in runs:
            out = os.path.join(tmp, f"out.b{b}.{target}.npz")
            cmd = [cagr, "run", model, "--inputs", os.path.join(base, ref["inputs"]), "--output", out,
                   "--target", target]
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                return {"status": "fail", "reason": f"cagr run timed out after {timeout} s", "batch": int(b),
                        "max_err": None}
            if p.returncode != 0 or not os.path.exists(out):
                return {"status": "fail", "reason": error_line(p.stderr, p.stdout, model), "batch": int(b), "max_err": None}
            ok, why, err = compare(os.path.join(base, ref["outputs"]), out, tol)
            if not ok:
                return {"status": "fail", "reason": trim(f"{target}: {why}"), "batch": int(b), "max_err": err}
            worst = max(worst, err)
        if plans:
            why = check_plans(f, cagr, base, tol, timeout, model, tmp)
            if why:
                return {"status": "fail", "reason": trim(why), "batch": None, "max_err": None}
    return {"status": "pass", "reason": None, "batch": None, "max_err": worst}


# Default plans must be lossless (issue 38): every fixture that imports is
# also optimized with default flags and its plan run. Greedy for the CPU runs
# on the CPU backend; one more (policy, target) pair per fixture, rotating
# through all of them over the manifest, runs on the reference executor.
PLAN_POLICIES = ["greedy", "beam:2", "random", "rl", "rl+greedy"]
PLAN_TARGETS = ["x86-64", "h200", "mi250x", "tpu-v4"]


def check_plans(f, cagr, base, tol, timeout, model, tmp):
    """-> None, or why a default plan of the fixture does not match."""
    b, ref = max(f["refs"].items(), key=lambda kv: int(kv[0]))
    combos = [(p, t) for t in PLAN_TARGETS for p in PLAN_POLICIES]
    rotated = combos[sum(map(ord, f["id"])) % len(combos)]
    for policy, target, run_on in [("greedy", "cpu", "cpu"), rotated + ("reference",)]:
        plan = os.path.join(tmp, f"plan.{policy.replace(':', '_')}.{target}.cagr")
        out = os.path.join(tmp, f"plan.{policy.replace(':', '_')}.{target}.npz")
        steps = [[cagr, "optimize", model, "--target", target, "--policy", policy, "--batch", str(b), "-o", plan],
                 [cagr, "run", plan, "--inputs", os.path.join(base, ref["inputs"]), "--output", out,
                  "--target", run_on]]
        for cmd in steps:
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                return f"{policy} plan for {target}: {cmd[1]} timed out after {timeout} s"
            if p.returncode != 0:
                return f"{policy} plan for {target}: {cmd[1]}: {error_line(p.stderr, p.stdout, model)}"
        ok, why, _ = compare(os.path.join(base, ref["outputs"]), out, tol)
        if not ok:
            return f"{policy} plan for {target} on {run_on}: {why}"
    return None


def normalise(reason):
    """Groups messages that differ only in node names and numbers."""
    s = re.sub(r"'[^']*'", "'…'", reason or "")
    s = re.sub(r"\b\d+(\.\d+)?(e[-+]?\d+)?\b", "N", s)
    return s


def write_table(path, fixtures, results):
    models = collections.OrderedDict()
    for f in fixtures:
        models.setdefault((f["family"], f["model"]), {})[column_of(f)] = f
    cols = [c for c in COLUMNS if any(c in cells for cells in models.values())]
    reasons = collections.OrderedDict()

    def cell(f):
        r = results.get(f["id"])
        if r is None:
            return "·"
        if r["status"] == "pass":
            return "pass"
        if r["status"] == "export-error":
            key = "torch export: " + normalise(r["reason"])
            tag = "X"
        else:
            key = normalise(r["reason"])
            tag = "E"
        if key not in reasons:
            reasons[key] = {"n": 0, "tag": f"{tag}{sum(1 for v in reasons.values() if v['tag'][0] == tag) + 1}",
                            "example": r["reason"], "example_id": f["id"]}
        reasons[key]["n"] += 1
        return ("no export " if tag == "X" else "fail ") + reasons[key]["tag"]

    lines = ["| family | model | " + " | ".join(column_title(c) for c in cols) + " |",
             "|---|---|" + "---|" * len(cols)]
    for (fam, model), cells in models.items():
        lines.append(f"| {fam} | {model} | " + " | ".join(cell(cells[c]) if c in cells else "" for c in cols) + " |")
    counts = collections.Counter(r["status"] for r in results.values())
    lines += ["", f"{counts['pass']} pass / {counts['fail']} fail; {counts['export-error']} not exported by torch, "
                  f"{counts['ort-error']} not run by ONNX Runtime.", "",
              "| code | fixtures | message (first seen) | first fixture |", "|---|---|---|---|"]
    for v in sorted(reasons.values(), key=lambda v: (v["tag"][0], int(v["tag"][1:]))):
        msg = v["example"].replace("|", "\\|")
        lines.append(f"| {v['tag']} | {v['n']} | `{msg}` | {v['example_id']} |")
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


def summary_by(fixtures, results, key):
    agg = collections.OrderedDict()
    for f in fixtures:
        r = results.get(f["id"])
        if r is None:
            continue
        agg.setdefault(key(f), collections.Counter())[r["status"]] += 1
    return agg


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cagr", required=True, help="the cagr binary")
    ap.add_argument("--manifest", default=os.path.join(ROOT, "zoo", "thirdparty", "manifest.json"))
    ap.add_argument("--table", help="write a markdown status table here")
    ap.add_argument("--json", help="write per-fixture results here")
    ap.add_argument("--update-expected", action="store_true", help="rewrite expected/reason from this run")
    ap.add_argument("--models", default="", help="comma-separated models to check (default: all)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=120, help="seconds per cagr run")
    ap.add_argument("--targets", default="reference,cpu",
                    help="cagr run --target values each fixture must pass on (default reference,cpu)")
    ap.add_argument("--no-plans", action="store_true",
                    help="only import and run; skip optimizing each fixture with default flags")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every fixture")
    a = ap.parse_args()
    if not os.access(a.cagr, os.X_OK):
        print(f"thirdparty_check: --cagr {a.cagr} is not an executable", file=sys.stderr)
        return 2
    with open(a.manifest) as fh:
        man = json.load(fh, object_pairs_hook=collections.OrderedDict)
    base = os.path.dirname(os.path.abspath(a.manifest))
    tol = float(man.get("tolerance", 1e-5))
    only = {m for m in a.models.split(",") if m}
    fixtures = [f for f in man["fixtures"] if not only or f["model"] in only]

    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        futs = {pool.submit(check_fixture, f, os.path.abspath(a.cagr), base, tol, a.timeout,
                            [t for t in a.targets.split(",") if t], not a.no_plans): f for f in fixtures}
        for fut in concurrent.futures.as_completed(futs):
            results[futs[fut]["id"]] = fut.result()

    bad = []
    for f in fixtures:
        r = results[f["id"]]
        exp = f.get("expected")
        st = r["status"]
        ran = st in ("pass", "fail")
        line = f"{st:12s} {f['id']}" + (f" (batch {r['batch']})" if r["batch"] is not None else "") + \
            (f": {r['reason']}" if r["reason"] else "")
        if ran and exp in ("pass", "fail") and exp != st:
            bad.append(f"expected {exp}, got {line}")
        elif a.verbose or (ran and exp not in ("pass", "fail")):
            print(line + ("" if exp in ("pass", "fail", "skip") else "   [no expectation yet]"))
        if ran and exp == "fail" and st == "fail" and normalise(r["reason"]) != normalise(f.get("reason")):
            print(f"note: {f['id']} fails differently now: {r['reason']}")

    print("\nby family / exporter:")
    for k, c in summary_by(fixtures, results, lambda f: (f["family"], f["exporter"])).items():
        print(f"  {k[0]:9s} {k[1]:7s} " + ", ".join(f"{n} {s}" for s, n in sorted(c.items())))
    groups = collections.Counter(normalise(r["reason"]) for r in results.values() if r["status"] == "fail")
    if groups:
        print("\ncagr errors (grouped, names and numbers elided):")
        for msg, n in groups.most_common():
            print(f"  {n:4d}  {msg}")

    if a.update_expected:
        for f in fixtures:
            r = results[f["id"]]
            if r["status"] in ("pass", "fail"):
                f["expected"] = r["status"]
                f["reason"] = r["reason"]
            else:
                f["expected"] = "skip"
        with open(a.manifest, "w") as fh:
            json.dump(man, fh, indent=1)
            fh.write("\n")
        print(f"\nupdated expected/reason in {a.manifest}")
        bad = []
    if a.table:
        write_table(a.table, fixtures, results)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(results, fh, indent=1, sort_keys=True)
    counts = collections.Counter(r["status"] for r in results.values())
    for b in bad:
        print("MISMATCH: " + b)
    print(f"\n{counts['pass']} pass / {counts['fail']} fail ({counts['export-error']} export errors, "
          f"{counts['ort-error']} ORT errors not run); {len(bad)} differ from the manifest's expectation")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
