"""Report of the CUDA side-by-side: merges the records of one or more runs
(.jsonl partials or earlier .json reports), derives per model x batch x
precision the best framework peer, the hand-optimized time (its faster
variant), the ratios and the fraction of the roofline bound, and writes
cuda_side_by_side.{json,md,png}.

The bound is modelled, not measured: max(FLOPs / peak, compulsory bytes / HBM
bandwidth) with the datasheet figures below of the GPU the runs were on
(H100 SXM or H200 SXM; the H200's for any other).
"""
import json
import os

from names import FRAMEWORK_PEERS, LABELS
from shared import fmt, geomean

# NVIDIA datasheets (dense, no sparsity), FLOP/s and byte/s. The two share
# the SXM Hopper die's clocks and SMs; the H200 has faster, larger HBM.
_HOPPER_FLOPS = {"fp32": 67e12, "tf32": 495e12, "bf16": 989e12}
DATASHEETS = {
    "H200": {"source": "NVIDIA H200 SXM datasheet", "flops": _HOPPER_FLOPS, "hbm_bytes_per_s": 4.8e12},
    "H100": {"source": "NVIDIA H100 SXM5 datasheet", "flops": _HOPPER_FLOPS, "hbm_bytes_per_s": 3.35e12},
}
PRECISIONS = ["fp32", "tf32", "bf16"]
MODEL_ORDER = ["dlrm_criteo", "deepfm", "xdeepfm", "dcnv2"]
ORDER = FRAMEWORK_PEERS + ["hand_graph", "hand_ro", "hand_eager", "hand_compile", "cagr"]


def load(paths):
    """(runs, records) of every file: .jsonl lines or a report's JSON."""
    runs, records = [], []
    for path in paths:
        if path.endswith(".jsonl"):
            with open(path) as f:
                rows = [json.loads(line) for line in f if line.strip()]
        else:
            with open(path) as f:
                d = json.load(f)
            rows = d.get("runs", []) + d.get("records", [])
        runs += [r for r in rows if r.get("kind") == "run"]
        records += [r for r in rows if r.get("kind") in ("engine", "case")]
    return runs, records


def dedupe(records):
    """One record per key; a successful record beats a failed one, else the later wins."""
    best = {}
    for r in records:
        key = (r["kind"], r["model"], r["batch"], r.get("precision"), r.get("engine"))
        old = best.get(key)
        if old is None or r.get("ok", True) or not old.get("ok", True):
            best[key] = r
    return list(best.values())


def datasheet(runs):
    """The datasheet the bound takes: the first run's GPU's, the H200's if it is neither."""
    name = next(((r.get("gpu") or {}).get("name") for r in runs if r.get("gpu")), None) or ""
    return DATASHEETS["H100" if "H100" in name else "H200"]


def bound(case_rec, precision, sheet):
    """Modelled lower bound in ms for one precision, or None without a FLOP count."""
    flops = case_rec.get("flops")
    if not flops:
        return None
    nbytes = case_rec.get("io_bytes", 0) + case_rec.get("param_bytes", 0) * (0.5 if precision == "bf16" else 1)
    t_flop, t_mem = flops / sheet["flops"][precision], nbytes / sheet["hbm_bytes_per_s"]
    return {"bound_ms": 1e3 * max(t_flop, t_mem), "compute_ms": 1e3 * t_flop, "memory_ms": 1e3 * t_mem,
            "bound_by": "compute" if t_flop >= t_mem else "memory"}


def derive(records, sheet):
    """Cases (model x batch x precision), each with its engine rows and ratios."""
    shapes = {(r["model"], r["batch"]): r for r in records if r["kind"] == "case"}
    rows = [r for r in records if r["kind"] == "engine"]
    keys = sorted({(r["model"], r["batch"], r["precision"]) for r in rows},
                  key=lambda k: (MODEL_ORDER.index(k[0]) if k[0] in MODEL_ORDER else 99, k[0], k[1],
                                 PRECISIONS.index(k[2]) if k[2] in PRECISIONS else 9))
    cases = []
    for model, batch, prec in keys:
        engines = sorted([r for r in rows if (r["model"], r["batch"], r["precision"]) == (model, batch, prec)],
                         key=lambda r: ORDER.index(r["engine"]) if r["engine"] in ORDER else 99)
        ok = [r for r in engines if r.get("ok")]
        peer = min((r for r in ok if r["engine"] in FRAMEWORK_PEERS), key=lambda r: r["median_ms"], default=None)
        hand = min((r for r in ok if r["engine"].startswith("hand")), key=lambda r: r["median_ms"], default=None)
        shape = shapes.get((model, batch), {})
        b = bound(shape, prec, sheet)
        for r in ok:
            r["x_best_peer"] = r["median_ms"] / peer["median_ms"] if peer else None
            r["x_hand"] = r["median_ms"] / hand["median_ms"] if hand else None
            on_gpu = r.get("device", "").startswith("cuda")
            r["bound_fraction"] = b["bound_ms"] / r["median_ms"] if b and on_gpu else None
        cagr = next((r for r in ok if r["engine"] == "cagr"), None)
        cases.append({"model": model, "batch": batch, "precision": prec, "bound": b,
                      "flops": shape.get("flops"), "flops_source": shape.get("flops_source"),
                      "best_peer": peer["engine"] if peer else None, "hand": hand["engine"] if hand else None,
                      "cagr_speedup_over_best_peer": peer["median_ms"] / cagr["median_ms"] if peer and cagr else None,
                      "cagr_speedup_over_hand": hand["median_ms"] / cagr["median_ms"] if hand and cagr else None,
                      "engines": engines})
    return cases


def _mb(x):
    # Below zero: memory an earlier engine held (torch.compile's CUDA-graph
    # pools) was released while this one ran, so its own peak is unknown.
    if x is not None and x < 0:
        return "n/a"
    return fmt(x / 2**20 if x is not None else None, ".1f")


def _errs(r):
    if r.get("max_abs_err") is None:
        return "—", "—"
    return f"{r['max_abs_err']:.1e}", f"{r['max_rel_err']:.1e}"


def _note(r, case):
    if r.get("skipped"):
        return "skipped: " + r["skipped"]
    if not r.get("ok"):
        return "**failed**: " + str(r.get("error", "?")).replace("|", "/")
    parts = []
    if r["engine"] == case["best_peer"]:
        parts.append("best framework peer")
    if r["engine"] == case["hand"]:
        parts.append("**hand-optimized** (faster variant)")
    if r.get("check") not in (None, "ok"):
        parts.append(f"check {r['check']}")
    if r["engine"] == "cagr":
        parts += [f"{k[5:]} {r[k]}" for k in ("cagr_policy", "cagr_latency_kind") if r.get(k)]
        if r.get("unoptimized_ms") is not None:
            parts.append(f"unoptimized plan {r['unoptimized_ms']:.3f} ms")
        parts += [f"{k[5:]} {r[k]:.2f}" for k in sorted(r) if k.startswith("cagr_") and k.endswith("seconds")]
        if r.get("kernels") is not None:
            parts.append(f"{r['kernels']} kernels")
        if r.get("max_abs_err") is None:
            parts.append("output not compared (no --output file)")
    if r.get("note"):
        parts.append(r["note"])
    return "; ".join(parts)


def case_table(case):
    L = ["| engine | median ms | p10–p90 ms | spread % | peak MB | build peak MB | opt. s | x best peer | x hand "
         "| % of bound | max abs err | max rel err | notes |",
         "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in case["engines"]:
        ok = r.get("ok")
        spread = f"{r['p10_ms']:.3f}–{r['p90_ms']:.3f}" if ok and r.get("p10_ms") is not None else "—"
        opt = r.get("optimize_s") if r["engine"] != "eager" else None
        frac = r.get("bound_fraction")
        abs_e, rel_e = _errs(r)
        L.append("| " + " | ".join([
            LABELS.get(r["engine"], r["engine"]), fmt(r.get("median_ms") if ok else None, ".3f"), spread,
            fmt(r.get("spread_pct") if ok else None, ".1f"), _mb(r.get("peak_bytes") if ok else None),
            _mb(r.get("build_peak_bytes") if ok else None), fmt(opt if ok else None, ".2f"),
            fmt(r.get("x_best_peer"), ".2f"), fmt(r.get("x_hand"), ".2f"),
            fmt(100 * frac if frac else None, ".1f"), abs_e, rel_e, _note(r, case)]) + " |")
    return L


def summary_table(cases):
    L = ["| model | batch | precision | best framework peer | ms | hand-optimized | ms | CAGR ms "
         "| CAGR speed-up vs best peer | CAGR speed-up vs hand | bound ms (modelled) |",
         "| --- | ---: | --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |"]
    for c in cases:
        by = {r["engine"]: r for r in c["engines"]}
        peer, hand, cagr = by.get(c["best_peer"]), by.get(c["hand"]), by.get("cagr")
        L.append("| " + " | ".join([
            c["model"], str(c["batch"]), c["precision"], LABELS.get(c["best_peer"], "—"),
            fmt(peer["median_ms"] if peer else None, ".3f"),
            LABELS.get(c["hand"], "—").replace("hand-optimized, ", ""),
            fmt(hand["median_ms"] if hand else None, ".3f"),
            fmt(cagr["median_ms"] if cagr and cagr.get("ok") else None, ".3f"),
            fmt(c["cagr_speedup_over_best_peer"], ".2f"), fmt(c["cagr_speedup_over_hand"], ".2f"),
            fmt(c["bound"]["bound_ms"] if c["bound"] else None, ".3f")]) + " |")
    return L


def header(runs, changes):
    r0, sheet = runs[0] if runs else {}, datasheet(runs)
    tflops = ", ".join(f"{p} {sheet['flops'][p] / 1e12:.0f}" for p in PRECISIONS)
    g, h = r0.get("gpu") or {}, r0.get("host") or {}
    where = g.get("name") or f"the CPU ({h.get('cpu', '?')}), smoke test"
    L = ["# CUDA side-by-side: CAGR, PyTorch engines and hand-optimized PyTorch", "",
         f"Everything in this report is measured on {where}, except the roofline bound, which is modelled "
         "from datasheet figures.", ""]
    for r in runs:
        L.append(f"- run {r.get('date')}: `{r.get('command')}` ({fmt(r.get('wall_s'), '.0f')} s"
                 + (", stopped at --deadline" if r.get("deadline_hit") else "") + ")")
    if g:
        L.append(f"- GPU: {g.get('name')}, {fmt(g.get('memory_gib'), '.0f')} GiB, {g.get('sms')} SMs, "
                 f"sm_{g.get('capability')}; driver {g.get('driver', '?')}")
    L += [f"- host: {h.get('hostname')}, {h.get('cpu')}, {h.get('cores_online')} cores, {h.get('memory_gib')} GiB; "
          f"torch CPU threads {r0.get('cpu_threads', '?')}",
          "- versions: " + ", ".join(f"{k} {v}" for k, v in (r0.get("versions") or {}).items()),
          f"- inputs: {r0.get('inputs', '?')}; models: zoo/models.py with the weights of zoo/onnx/<model>.dynamo.onnx "
          "(read by bench/cuda/onnx_weights.py), CAGR on the same ONNX file and the same inputs (.npz)"
          + "".join(f"; {m}: {n}" for m, n in sorted(changes.items())),
          "- precisions: fp32 = TF32 off (torch.backends.cuda.matmul / cudnn allow_tf32 = False); tf32 = on; "
          "bf16 = torch.autocast(bfloat16) over the fp32 model (hand-optimized: weights stored in bf16); "
          "CAGR: `--precision tf32|bf16`",
          f"- timing (measured): {r0.get('warmup')} warm-up calls, then {r0.get('repeats')} repeats of N back-to-back "
          f"calls (N so that a repeat lasts ~{r0.get('repeat_ms')} ms), {r0.get('timer', 'CUDA events')} around each "
          "repeat; median and p10–p90 of the per-call time over the repeats; spread = (p90 - p10) / median; "
          "inputs stay in place (CUDA Graph engines replay on them; reduce-overhead copies them into its graph's "
          "buffers each call); CAGR: its own `cagr bench --json` timing",
          "- peak MB (measured): torch.cuda.max_memory_allocated over the timed calls minus what was allocated "
          "before the engine was built (so: its weights, activations, CUDA Graph pools, workspaces); build peak "
          "MB: the same over build, compile, first call and warm-up; CAGR: `peak_memory_bytes` of its JSON (weights, "
          "arena, library workspaces, CIN scratch) less its arena's inputs (`peak_memory_breakdown.arena_input_bytes`"
          ", where reported), as the PyTorch figures leave out the inputs made before the engine; n/a: the "
          "difference came out negative (memory an earlier engine held, such as torch.compile's CUDA-graph pool, "
          "was released while this one ran), so this way does not measure that engine's peak",
          "- opt. s (measured): build + first call (trace/freeze, Dynamo + Inductor with caches "
          f"{'kept' if r0.get('caches') == 'warm' else 'disabled'}, CUDA Graph capture; reduce-overhead and "
          "max-autotune record their CUDA Graphs on the next calls, in the warm-up); CAGR: `optimize_seconds` "
          "of its JSON",
          "- errors: against eager fp32 (TF32 off) on the same GPU and inputs; rel = max |out - ref| / max |ref|; "
          f"fp32 must be within {r0.get('fp32_abs_tol')} abs, bf16 cells over {r0.get('rel_tol')} rel are not timed",
          "- x best peer: median / median of the fastest of eager, TorchScript, the three torch.compile modes and "
          "eager + CUDA Graph (below 1 = faster); x hand: median / hand-optimized median",
          "- % of bound (modelled bound / measured median): bound = max(FLOPs / peak, (parameters + inputs + "
          f"outputs) bytes / {sheet['hbm_bytes_per_s'] / 1e12:.2f} TB/s); peaks from the {sheet['source']}, dense: "
          f"{tflops} TFLOP/s; FLOPs counted by `cagr inspect --json` where available, else by "
          "torch.utils.flop_counter (matmul/conv only)", ""]
    return L


def write_md(path, runs, cases, problems, changes):
    L = header(runs, changes) + ["## Summary (measured)", ""] + summary_table(cases) + [""]
    for c in cases:
        b = c["bound"]
        L += [f"## {c['model']}, batch {c['batch']}, {c['precision']}", ""]
        if b:
            L += [f"{c['flops'] / 1e9:.2f} GFLOP ({c['flops_source']}); bound {b['bound_ms']:.4f} ms, "
                  f"{b['bound_by']}-bound (modelled)", ""]
        L += case_table(c) + [""]
    if problems:
        L += ["## Problems", ""] + [f"- {p}" for p in problems]
    with open(path + ".tmp", "w") as f:
        f.write("\n".join(L) + "\n")
    os.replace(path + ".tmp", path)


def write_json(path, runs, records, cases, problems):
    speedups = {}
    for c in cases:
        speedups.setdefault(c["precision"], []).append(c["cagr_speedup_over_best_peer"])
    d = {"runs": runs, "records": records, "cases": cases, "problems": problems,
         "cagr_speedup_over_best_peer_geomean": {p: geomean(v) for p, v in speedups.items()},
         "peaks": datasheet(runs)}
    with open(path + ".tmp", "w") as f:
        json.dump(d, f, indent=1)
    os.replace(path + ".tmp", path)


def write_png(path, cases, title):
    """Median per engine (log scale), one panel per precision; None if drawn,
    else the reason it was not."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        return f"no chart: {e}"
    precs = [p for p in PRECISIONS if any(c["precision"] == p for c in cases)]
    if not precs:
        return "no chart: no measured cell"
    fig, axes = plt.subplots(len(precs), 1, figsize=(12, 3.6 * len(precs)), squeeze=False)
    colors = {e: plt.get_cmap("tab20")(i % 20) for i, e in enumerate(ORDER)}  # one colour per engine everywhere
    for ax, prec in zip(axes[:, 0], precs):
        sub = [c for c in cases if c["precision"] == prec]
        names = [e for e in ORDER if any(r["engine"] == e and r.get("ok") for c in sub for r in c["engines"])]
        w = 0.8 / max(1, len(names))
        for i, e in enumerate(names):
            pts = [(j, r["median_ms"]) for j, c in enumerate(sub) for r in c["engines"]
                   if r["engine"] == e and r.get("ok")]
            ax.bar([j - 0.4 + w * (i + 0.5) for j, _ in pts], [v for _, v in pts], w, label=LABELS[e],
                   color=colors[e])
        ax.set_yscale("log")
        ax.set_xticks(range(len(sub)))
        ax.set_xticklabels([f"{c['model']} b{c['batch']}" for c in sub], fontsize=8)
        ax.set_ylabel(f"{prec}: median ms")
        ax.grid(axis="y", which="both", alpha=0.3)
    axes[0, 0].set_title(title, fontsize=9)
    shown = {}
    for ax in axes[:, 0]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            shown.setdefault(label, handle)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.legend(shown.values(), shown.keys(), fontsize=7, ncol=5, loc="lower center", frameon=False)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


def write_all(out_dir, runs, records, problems, chart=True):
    """Writes the report files from records; returns the derived cases."""
    records = dedupe(records)
    cases = derive(records, datasheet(runs))
    base = os.path.join(out_dir, "cuda_side_by_side")
    problems = list(problems)
    if chart:
        g = (runs[0].get("gpu") or {}).get("name") if runs else None
        why = write_png(base + ".png", cases, f"measured on {g or 'the CPU (smoke test)'}; lower is better")
        if why:
            problems.append(why)
    write_json(base + ".json", runs, records, cases, problems)
    changes = {r["model"]: r["module_change"] for r in records if r["kind"] == "case" and r.get("module_change")}
    write_md(base + ".md", runs, cases, problems, changes)
    return cases
