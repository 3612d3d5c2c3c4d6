"""The report of the CPU side-by-side (bench/cpu/run.py): the Markdown table
per model x batch with CAGR's per-kernel breakdown, the speed-up summary,
and the PNG chart. Shared constants of the run live here too."""
import math

from breakdown import breakdown_md

ENGINES = ["cagr", "ort", "eager", "torchscript", "compile", "tvm"]
LABELS = {"cagr": "CAGR (optimized plan)", "cagr_unopt": "CAGR (unoptimized plan)", "ort": "ONNX Runtime",
          "eager": "PyTorch eager", "torchscript": "TorchScript", "compile": "torch.compile (Inductor)",
          "tvm": "TVM"}
SMALL_ROWS = 1000  # the zoo's ONNX files are the 'small' size: every table capped at 1000 rows
CHECK_TOL = 1e-4
# With --rounds, engines slower than this many times the fastest in round 1 are not repeated.
ROUND_SLACK = 3.0


def fmt(x, spec, none="—"):
    return none if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def engine_note(r):
    if not r.get("ok"):
        return "**failed**: " + r.get("error", "?").replace("|", "/")
    parts = []
    if r["engine"] == "cagr":
        parts.append(f"policy {r.get('policy')}, {r.get('decisions')} decisions, "
                     f"optimize {fmt(r.get('optimize_seconds'), '.2f')} s")
        if r.get("reduced_precision"):
            parts.append(f"**not all fp32**: {len(r['reduced_precision'])} set_precision decisions "
                         f"(e.g. {r['reduced_precision'][0]})")
        if r.get("cagr_peak_memory_bytes") is not None:
            parts.append(f"arena peak {r['cagr_peak_memory_bytes'] / 2**20:.1f} MB (cagr's own count)")
    if r.get("compile_seconds") is not None:
        parts.append(f"compile {r['compile_seconds']:.1f} s")
    if r.get("frontend"):
        parts.append(r["frontend"])
    if r.get("note"):
        parts.append(r["note"])
    if r.get("round_ms"):
        parts.append("round medians " + ", ".join(f"{x:.3f}" for x in r["round_ms"]) + " ms")
    return "; ".join(parts)


def check_cell(r):
    if not r.get("ok"):
        return "—"
    c = r.get("check", "n/a")
    if r["engine"] == "cagr":
        err = r.get("max_abs_diff_vs_unoptimized")
        c = "self " + c
    else:
        err = r.get("max_abs_err_vs_ort")
    return c if err is None or c == "ref" else f"{c} ({err:.1e})"


def write_md(res, path):
    h, hw = res["host"], res["hw_profile"]
    L = ["# CPU side-by-side: CAGR and its peers", "",
         f"- command: `{res['command']}`",
         f"- host: {h['hostname']}, {h['cpu']}, {h['cores_online']} cores online, {h['memory_gib']} GiB, "
         f"Linux {h['kernel']}; load average {res['load_start']} at start, {res['load_end']} at end "
         "(other processes may share these cores)",
         f"- date: {res['date']} ({res['wall_seconds']:.0f} s)",
         f"- threads: {res['threads']} for every engine (OMP/MKL/OpenBLAS/TVM_NUM_THREADS, torch.set_num_threads, "
         "ORT intra_op, inter_op 1), process pinned to the first cores",
         "- versions: " + ", ".join(f"{k} {v}" for k, v in res["versions"].items()),
         f"- inputs: data/gen.py, seed {res['seed']}, ids capped at {SMALL_ROWS} rows (the zoo's small tables)"
         f", DLRM bags of {res['pooling']} id(s); one file per model x batch, the same for every engine; "
         f"models: zoo/onnx/<model>.{res['exporter']}.onnx (ORT, TVM, CAGR) and zoo/models.py with the "
         "ONNX initializers as weights (PyTorch engines), fp32",
         f"- timing (measured): {res['warmup']} warm-up runs, then until {res['seconds']} s and {res['min_runs']} "
         f"runs (or {res['max_seconds']} s and 3 runs; warm-up cut after half that); median and spread = "
         "(p90 - p10) / median" + (
             f"; {res['rounds']} rounds: the engines run in turn {res['rounds']} times per model x batch (each in "
             f"a fresh process), median = median of the round medians, spread = the first round's, runs = all "
             f"rounds'; engines over {ROUND_SLACK:g}x the fastest in round 1 run once"
             if res.get("rounds", 1) > 1 else ""),
         "- peak MB (measured): max RSS of the engine's process (resource.getrusage) minus the same before the "
         "model is loaded (after imports and inputs); for CAGR, max RSS of `cagr bench` minus that of "
         "`cagr --help`, and it includes both the unoptimized and the optimized plan; peak MB includes any "
         "compilation done in the process (torch.compile, TVM, CAGR's optimizer)",
         "- run MB (measured): the same high-water mark reset after loading/compiling (/proc/self/clear_refs) "
         "and read (VmHWM) after the warm-up and timed runs, minus the same baseline: weights, compiled code "
         "and activations in steady state (not available for CAGR, a separate binary)",
         "- check: max |output - ONNX Runtime output| <= 1e-4 on the same inputs; CAGR's check is its own "
         "(optimized vs unoptimized plan, from `cagr bench`)",
         "- x best peer: engine median / median of the fastest non-CAGR engine (below 1 = faster)"]
    if hw:
        L.append(f"- roofline % (modelled bound / measured time): bound = max(FLOPs / {hw['peak_flops'] / 1e9:.1f} "
                 f"GFLOP/s, bytes / {hw['bandwidth'] / 1e9:.1f} GB/s); FLOPs and bytes are counted by "
                 f"`cagr inspect --json` (totals, modelled); both peaks are from `{hw['path']}` "
                 f"({hw['date']}, {hw['measured_on']}): fp32 peak {hw['peak_flops_source'].split(':')[0]}, "
                 f"{hw['level']} bandwidth {hw['bandwidth_source'].split(':')[0]}")
    L.append("")
    for case in res["cases"]:
        rf = case.get("roofline")
        L += [f"## {case['model']}, batch {case['batch']}", ""]
        if rf:
            L.append(f"{rf['flops'] / 1e9:.3f} GFLOP, {rf['bytes'] / 2**20:.1f} MiB moved (modelled); roofline "
                     f"bound {rf['bound_ms']:.3f} ms ({rf['bound_by']}-bound). Inputs: `{case['inputs_command']}`")
            L.append("")
        L += ["| engine | median ms | spread % | runs | peak MB | run MB | x best peer | roofline % | check | notes |",
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
        for r in case["engines"]:
            ok = r.get("ok")
            peak, run = r.get("peak_rss_bytes"), r.get("run_peak_rss_bytes")
            L.append("| " + " | ".join([
                LABELS.get(r["engine"], r["engine"]) + (" (best peer)" if r["engine"] == case["best_peer"] else ""),
                fmt(r.get("median_ms") if ok else None, ".3f"), fmt(r.get("spread_pct") if ok else None, ".1f"),
                str(r.get("runs") or "—") if ok else "—",
                fmt(peak / 2**20 if ok and peak is not None else None, ".1f"),
                fmt(run / 2**20 if ok and run is not None else None, ".1f"),
                fmt(r.get("ratio_to_best_peer"), ".2f"),
                fmt(100 * r["roofline_fraction"] if r.get("roofline_fraction") else None, ".1f"),
                check_cell(r), engine_note(r)]) + " |")
        sp = case.get("cagr_speedup_over_best_peer")
        L += [""] + breakdown_md(next((r.get("breakdown") for r in case["engines"] if r["engine"] == "cagr"), None))
        L += [f"CAGR speed-up over the best peer ({LABELS.get(case['best_peer'], '—')}): "
              f"{fmt(sp, '.2f')}x (measured)", ""]
    L += ["## CAGR speed-up over the best peer (measured)", "",
          "| model | " + " | ".join(f"batch {b}" for b in res["batches"]) + " | geometric mean |",
          "| --- | " + " | ".join("---:" for _ in res["batches"]) + " | ---: |"]
    for m, g in res["geomean"].items():
        cells = [fmt(next((c["cagr_speedup_over_best_peer"] for c in res["cases"]
                           if c["model"] == m and c["batch"] == b), None), ".2f") for b in res["batches"]]
        L.append(f"| {m} | " + " | ".join(cells) + f" | {fmt(g, '.2f')} |")
    if res.get("problems"):
        L += ["", "## Problems", ""] + [f"- {p}" for p in res["problems"]]
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")


def write_png(res, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    cases = res["cases"]
    engines = [e for e in ["cagr", "cagr_unopt"] + ENGINES[1:]
               if any(r["engine"] == e and r.get("ok") for c in cases for r in c["engines"])]
    if not engines:
        return
    width = 0.8 / len(engines)
    fig, ax = plt.subplots(figsize=(max(10, 1.6 * len(cases)), 5.5))
    for i, e in enumerate(engines):
        xs, ys = [], []
        for j, c in enumerate(cases):
            r = next((r for r in c["engines"] if r["engine"] == e and r.get("ok")), None)
            if r:
                xs.append(j - 0.4 + width * (i + 0.5))
                ys.append(r["median_ms"])
        ax.bar(xs, ys, width, label=LABELS[e])
    ax.set_yscale("log")
    low = min(r["median_ms"] for c in cases for r in c["engines"] if r.get("ok"))
    ax.set_ylim(bottom=10 ** math.floor(math.log10(low)))  # bars start a decade below the fastest
    ax.set_xticks(range(len(cases)))
    ax.set_xticklabels([f"{c['model']}\nbatch {c['batch']}" for c in cases])
    ax.set_ylabel("median latency, ms (measured, log scale)")
    ax.set_title(f"CPU side-by-side, {res['threads']} threads, fp32 — {res['host']['cpu']}", fontsize=9)
    ax.legend(fontsize=8, ncol=min(4, len(engines)), loc="upper center", bbox_to_anchor=(0.5, -0.12), frameon=False)
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
