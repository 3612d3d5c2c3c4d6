#!/usr/bin/env python3
"""Cost-model accuracy report: modelled latency (cagr inspect --hw PROFILE) of
each zoo model's unoptimised plan vs its measured op-by-op latency (PyTorch
eager, measure_models.py), plus the per-kernel scores of
cagr_bench_kernel_accuracy. Writes a markdown report.

  python3 bench/cost_model_accuracy/report.py --cagr build/cagr --profile P.json \
     --measured models.json [--kernels kernels.json] --title "..." -o report.md
"""
import argparse
import json
import math
import subprocess


def spearman(a, b):
    if len(a) < 3:
        return float("nan")

    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2 + 1
            i = j + 1
        return r

    ra, rb = ranks(a), ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    num = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    den = math.sqrt(sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb))
    return num / den if den else float("nan")


def fmt(x, spec=".3f"):
    return "n/a" if x is None or x != x else format(x, spec)


def predict(cagr, profile, model, batch, no_patterns=False):
    cmd = [cagr, "inspect", f"zoo/onnx/{model}.dynamo.onnx", "--hw", profile, "--batch", str(batch), "--json"]
    out = subprocess.run(cmd + (["--no-patterns"] if no_patterns else []), check=True, capture_output=True,
                         text=True).stdout
    j = json.loads(out)
    return j["latency_ms"], j["latency_kind"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cagr", default="build/cagr")
    ap.add_argument("--profile", required=True)
    ap.add_argument("--measured", required=True)
    ap.add_argument("--kernels", default="")
    ap.add_argument("--title", default="Cost-model accuracy")
    ap.add_argument("--no-patterns", action="store_true", help="predict the graph as exported (no Interaction/FM/CIN)")
    ap.add_argument("--engine-label", default="PyTorch eager")
    ap.add_argument("--command", default="")
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()
    measured = json.load(open(a.measured))
    lines = [f"# {a.title}", ""]
    if a.command:
        lines += ["Produced by:", "", "```", a.command, "```", ""]
    rows = []
    kind = ""
    for r in measured:
        p, kind = predict(a.cagr, a.profile, r["model"], r["batch"], a.no_patterns)
        rows.append((r, p))
    where = measured[0].get("gpu", "host CPU, %d threads" % measured[0]["threads"]) if measured else "?"
    refs = [("median_ms", a.engine_label)]
    if any("graph_median_ms" in r for r in measured):
        refs.append(("graph_median_ms", "the same ops replayed from a CUDA Graph"))
    lines += [f"## Whole models: predicted ({kind}) vs measured on {where}",
              "", f"{measured[0]['what'].capitalize() if measured else ''};"
              " predicted = `cagr inspect zoo/onnx/MODEL.dynamo.onnx --hw PROFILE --batch N"
              f"{' --no-patterns' if a.no_patterns else ''}` (unoptimised plan, one kernel per HIR op, one stream).",
              ""]
    header = "| model | batch | predicted ms |" + "".join(f" {label} ms | error % |" for _, label in refs)
    lines += [header, "|---|---|---|" + "---|---|" * len(refs)]
    for r, p in rows:
        cells = ""
        for key, _ in refs:
            m = r.get(key)
            cells += f" {m:.3f} | {100 * (p - m) / m:+.1f} |" if m else " n/a | n/a |"
        lines.append(f"| {r['model']} | {r['batch']} | {p:.3f} |{cells}")
    lines.append("")
    for key, label in refs:
        for b in sorted({r["batch"] for r in measured}) + [None]:
            sel = [(p, r[key]) for r, p in rows if r.get(key) and (b is None or r["batch"] == b)]
            if not sel:
                continue
            mape = 100 * sum(abs(p - m) / m for p, m in sel) / len(sel)
            rho = spearman([p for p, _ in sel], [m for _, m in sel])
            lines.append(f"- vs {label}, {'all batches' if b is None else f'batch {b}'}: MAPE {mape:.1f} %, "
                         f"Spearman {fmt(rho)} over {len(sel)} pairs")
    if a.kernels:
        k = json.load(open(a.kernels))
        lines += ["", f"## Kernels: predicted (modelled from profile {k['profile']}, {k['profile_provenance']}) vs "
                  f"held-out measurements on {k['measured_on']}", "", "| family | n | MAPE % | Spearman |",
                  "|---|---|---|---|"]
        for name, g in sorted(k["families"].items()):
            lines.append(f"| {name} | {g['n']} | {fmt(g['mape_pct'], '.1f')} | {fmt(g['spearman'])} |")
        lines.append(f"| all | {k['all']['n']} | {fmt(k['all']['mape_pct'], '.1f')} | {fmt(k['all']['spearman'])} |")
        lines += ["", "| kernel (all its shapes) | n | MAPE % | Spearman |", "|---|---|---|---|"]
        for name, g in sorted(k.get("kernels", {}).items()):
            lines.append(f"| {name} | {g['n']} | {fmt(g['mape_pct'], '.1f')} | {fmt(g['spearman'])} |")
        lines += ["", "| kernel / class | n | MAPE % | Spearman |", "|---|---|---|---|"]
        for name, g in sorted(k["kernel_classes"].items()):
            lines.append(f"| {name} | {g['n']} | {fmt(g['mape_pct'], '.1f')} | {fmt(g['spearman'])} |")
    with open(a.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
