#!/usr/bin/env python3
"""CPU side-by-side: CAGR and its peers timed in one run, same host, same
thread count, same inputs, on the zoo's DLRM (dlrm_criteo), DeepFM, xDeepFM and
DCN-v2 at batch 256 and 4096, fp32. Every number it writes is measured on this
host, except the roofline bound (modelled from `cagr inspect` counts and the
measured host profile).

  python3 bench/cpu/run.py                      # full: -> bench/results/cpu_side_by_side.{md,json,png}
  python3 bench/cpu/run.py --quick --models dlrm_criteo,deepfm   # smoke run -> /tmp/cagr_cpu_side_by_side/
  python3 bench/cpu/run.py --threads 4 --engines cagr,ort,eager --batches 256
  python3 bench/cpu/run.py --hw bench/results/hw/host-cpu-xeon.json --rounds 3   # how the committed report was made

CAGR plans for the --hw profile (measured with `cagr profile --target cpu`).
On a shared VM single rounds move by 15-30 %: --rounds R interleaves the
engines R times and reports the median of the round medians.

Engines (each in its own subprocess, so max RSS is per engine):
  cagr         build/cagr bench <onnx> --target cpu --batch N --threads T --json --hw PROFILE
  ort          ONNX Runtime, ORT_ENABLE_ALL, intra_op T, inter_op 1, sequential
  eager        PyTorch eager: the zoo/models.py module, weights from the ONNX initializers
  torchscript  torch.jit.trace + torch.jit.freeze
  compile      torch.compile (Inductor, default mode); compile time reported apart
  tvm          Apache TVM from ONNX, opt_level 3, target llvm (Relay if present, else Relax)
Needs numpy, torch, onnx, onnxruntime, matplotlib (apache-tvm optional).
None of it is part of the C++ build."""
import argparse
import datetime
import importlib
import importlib.metadata
import json
import math
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

from breakdown import cagr_breakdown
from hostinfo import host_info, host_profile, same_cpu, versions
from cpu_report import CHECK_TOL, ENGINES, ROUND_SLACK, SMALL_ROWS, check_cell, fmt, write_md, write_png

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
ZOO = os.path.join(ROOT, "zoo")
MODELS = ["dlrm_criteo", "deepfm", "xdeepfm", "dcnv2"]
THREAD_VARS = ["OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "TVM_NUM_THREADS"]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- child side: one engine
def max_rss_bytes(who=resource.RUSAGE_SELF):
    return resource.getrusage(who).ru_maxrss * 1024  # Linux reports KiB


def reset_hwm():
    """Lowers this process's RSS high-water mark to its current RSS (Linux clear_refs 5)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            return f.write("5") == 1
    except OSError:
        return False


def hwm_bytes():
    line = next(x for x in open("/proc/self/status") if x.startswith("VmHWM:"))
    return int(line.split()[1]) * 1024


def quantile(sorted_ms, q):
    """Same rule as `cagr bench`: the element at floor(q * (n - 1))."""
    return sorted_ms[int(q * (len(sorted_ms) - 1))]


def time_fn(fn, a):
    """Warm-up (--warmup runs, cut short after --max-seconds / 2), then runs
    until both --seconds and --min-runs are reached, or --max-seconds has passed
    with at least 3 runs (slow engines at batch 4096)."""
    start = time.perf_counter()
    for _ in range(a.warmup):
        fn()
        if time.perf_counter() - start >= a.max_seconds / 2:
            break
    ms = []
    start = time.perf_counter()
    while True:
        t0 = time.perf_counter()
        fn()
        ms.append((time.perf_counter() - t0) * 1e3)
        elapsed = time.perf_counter() - start
        if (elapsed >= a.seconds and len(ms) >= a.min_runs) or (elapsed >= a.max_seconds and len(ms) >= 3):
            break
    ms.sort()
    med, p10, p90 = quantile(ms, 0.5), quantile(ms, 0.1), quantile(ms, 0.9)
    return {"median_ms": med, "p10_ms": p10, "p90_ms": p90, "runs": len(ms),
            "spread_pct": 100 * (p90 - p10) / med if med > 0 else 0.0}


def load_inputs(path):
    import numpy as np
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


def input_order(onnx_path):
    import onnx
    m = onnx.load(onnx_path, load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    return [i.name for i in m.graph.input if i.name not in inits]


def compare(out, ref_path):
    """Max abs error of the first output against the reference (ORT) output."""
    import numpy as np
    if not ref_path or not os.path.exists(ref_path):
        return None
    ref = load_inputs(ref_path)["out0"]
    out = np.asarray(out, dtype=np.float64).reshape(ref.shape)
    return float(np.max(np.abs(out - ref.astype(np.float64))))


def run_ort(a, feeds, names):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.intra_op_num_threads = a.threads
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    t0 = time.perf_counter()
    sess = ort.InferenceSession(a.onnx, so, providers=["CPUExecutionProvider"])
    info = {"load_seconds": time.perf_counter() - t0, "version": f"onnxruntime {ort.__version__}"}
    out = sess.run(None, feeds)[0]
    return lambda: sess.run(None, feeds), out, info


def torch_model(a):
    """The zoo module rebuilt as zoo/export.py builds it (seed 0, calibrated),
    then every parameter/buffer whose name is an ONNX initializer overwritten
    from it, so the weights are the exported ones, not a re-derivation."""
    import numpy as np
    import onnx
    import torch
    from onnx import numpy_helper
    sys.path.insert(0, ZOO)
    import models  # zoo/models.py
    m, spec = models.build(a.model, "small")
    inits = {t.name: t for t in onnx.load(a.onnx).graph.initializer}
    state = m.state_dict()
    loaded = 0
    for k, v in state.items():
        if k in inits:
            w = numpy_helper.to_array(inits[k])
            if tuple(w.shape) == tuple(v.shape):
                v.copy_(torch.from_numpy(np.ascontiguousarray(w)))
                loaded += 1
    m.eval()
    order = [n for n, _, _ in spec["inputs"]]
    return m, order, f"{loaded}/{len(state)} tensors loaded from ONNX initializers by name, rest rebuilt (seed 0)"


def run_torch(a, feeds, names):
    import torch
    torch.set_num_threads(a.threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    t0 = time.perf_counter()
    m, order, note = torch_model(a)
    args = tuple(torch.from_numpy(feeds[n]) for n in order)
    info = {"version": f"torch {torch.__version__}", "weights": note}
    if a.child == "eager":
        info["load_seconds"] = time.perf_counter() - t0
        with torch.inference_mode():
            out = m(*args).numpy()

        def fn():
            with torch.inference_mode():
                m(*args)
        return fn, out, info
    if a.child == "torchscript":
        with torch.no_grad():
            ts = torch.jit.freeze(torch.jit.trace(m, args, check_trace=False).eval())
            info["load_seconds"] = time.perf_counter() - t0
            out = ts(*args).numpy()

        def fn():
            with torch.no_grad():
                ts(*args)
        return fn, out, info
    compiled = torch.compile(m)  # Inductor, default mode
    info["load_seconds"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    with torch.no_grad():
        out = compiled(*args).numpy()
    info["compile_seconds"] = time.perf_counter() - t1

    def fn():
        with torch.no_grad():
            compiled(*args)
    return fn, out, info


def run_tvm(a, feeds, names):
    import onnx
    import tvm
    t0 = time.perf_counter()
    model = onnx.load(a.onnx)
    shapes = {n: feeds[n].shape for n in names}
    info = {"version": f"tvm {tvm.__version__}"}
    try:
        from tvm import relay
        from tvm.contrib import graph_executor
        have_relay = hasattr(relay, "frontend")
    except ImportError:
        have_relay = False
    dev = tvm.cpu(0)
    if have_relay:
        mod, params = relay.frontend.from_onnx(model, shape=shapes, freeze_params=True)
        with tvm.transform.PassContext(opt_level=3):
            lib = relay.build(mod, target="llvm", params=params)
        gm = graph_executor.GraphModule(lib["default"](dev))
        for n in names:
            gm.set_input(n, tvm.nd.array(feeds[n], dev))
        info["frontend"] = "relay, opt_level 3, target llvm, graph executor"
        info["compile_seconds"] = time.perf_counter() - t0
        gm.run()
        return gm.run, gm.get_output(0).numpy(), info
    from tvm import relax
    from tvm.relax.frontend.onnx import from_onnx
    mod = from_onnx(model, shape_dict=shapes, keep_params_in_input=False)
    with tvm.transform.PassContext(opt_level=3):
        ex = tvm.compile(mod, target="llvm")
    vm = relax.VirtualMachine(ex, dev)
    args = [tvm.runtime.tensor(feeds[n], dev) for n in names]
    info["frontend"] = "Relax (this TVM has no Relay): default pipeline, opt_level 3, target llvm, untuned"
    info["compile_seconds"] = time.perf_counter() - t0
    res = vm["main"](*args)
    res = res if hasattr(res, "numpy") else res[0]
    return lambda: vm["main"](*args), res.numpy(), info


def child_main(a):
    """One engine on one model x batch; writes a JSON result to --result."""
    pin(a.threads)
    res = {"engine": a.child, "ok": False}
    try:
        feeds = load_inputs(a.inputs)
        names = input_order(a.onnx)
        feeds = {n: feeds[n] for n in names}
        runner = {"ort": run_ort, "eager": run_torch, "torchscript": run_torch, "compile": run_torch,
                  "tvm": run_tvm}[a.child]
        # the engine's library is imported before the baseline: it is not the model's memory
        importlib.import_module({"ort": "onnxruntime", "tvm": "tvm"}.get(a.child, "torch"))
        base = max_rss_bytes()
        fn, out, info = runner(a, feeds, names)
        res.update(info)
        if a.save_output:
            import numpy as np
            np.savez(a.save_output, out0=np.asarray(out))
        err = compare(out, a.ref)
        res["max_abs_err_vs_ort"] = err
        res["check"] = "ref" if a.save_output else ("n/a" if err is None else
                                                     ("ok" if err <= CHECK_TOL else "MISMATCH"))
        peak_load = max_rss_bytes()
        reset = reset_hwm()
        res.update(time_fn(fn, a))
        res["baseline_rss_bytes"] = base
        res["peak_rss_bytes"] = max(peak_load, max_rss_bytes()) - base
        if reset:
            res["run_peak_rss_bytes"] = hwm_bytes() - base
        res["ok"] = True
    except Exception as e:  # noqa: BLE001  (any engine failure is a table entry, not a crash)
        res["error"] = f"{type(e).__name__}: {str(e).strip().splitlines()[0][:300] if str(e).strip() else ''}"
    with open(a.result, "w") as f:
        json.dump(res, f, indent=1)


# --------------------------------------------------------------------------- CAGR (a separate binary)
def cagr_options(cagr):
    """The options `cagr bench --help` lists, or None if there is no bench command."""
    try:
        p = subprocess.run([cagr, "bench", "--help"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if p.returncode != 0 or "--batch" not in p.stdout:
        return None
    return p.stdout


def cagr_hw_args(a, cmd):
    """CAGR plans for the measured host profile (issue 5, item 3) unless the
    command names another."""
    return ["--hw", a.hw] if a.hw and os.path.exists(a.hw) and "--hw" not in cmd else []


def run_cagr(a, onnx_path, npz, batch, breakdown=True):
    """`cagr bench` under this process's eye: max RSS from RUSAGE_CHILDREN, with
    `cagr --help` (binary and libraries loaded, no model) as the baseline."""
    res = {"engine": "cagr", "ok": False}
    if not os.path.exists(a.cagr):
        res["error"] = f"{a.cagr} not found (build CAGR first)"
        return res
    env = thread_env(a.threads)
    helptext = cagr_options(a.cagr)
    if helptext is None:
        res["error"] = f"`{a.cagr} bench` is not available in this build"
        return res
    cmd = [a.cagr, "bench", onnx_path, "--target", "cpu", "--batch", str(batch), "--threads", str(a.threads),
           "--json"]
    extra = {"--inputs": npz, "--seconds": str(a.seconds), "--runs": str(a.min_runs)}
    cmd += [x for k, v in extra.items() if k in helptext for x in (k, v)]
    if a.cagr_args:
        cmd += shlex.split(a.cagr_args)
    cmd += cagr_hw_args(a, cmd)
    res["command"] = " ".join(shlex.quote(c) for c in cmd)
    code = ("import json,resource,subprocess,sys\n"
            "subprocess.run([sys.argv[1],'--help'],capture_output=True)\n"
            "b=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss*1024\n"
            "p=subprocess.run(sys.argv[2:],capture_output=True,text=True)\n"
            "m=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss*1024\n"
            "print(json.dumps({'rc':p.returncode,'out':p.stdout,'err':p.stderr,'base':b,'peak':m}))\n")
    try:
        p = subprocess.run([sys.executable, "-c", code, a.cagr] + cmd, capture_output=True, text=True,
                           env=env, timeout=a.timeout, preexec_fn=lambda: pin(a.threads))
        w = json.loads(p.stdout)
    except subprocess.TimeoutExpired:
        res["error"] = f"timed out after {a.timeout} s"
        return res
    except (ValueError, OSError) as e:
        res["error"] = f"wrapper failed: {e}"
        return res
    if w["rc"] != 0:
        res["error"] = f"rc {w['rc']}: " + (w["err"].strip() or w["out"].strip())[-300:]
        return res
    try:
        j = json.loads(w["out"][w["out"].index("{"):])
        res.update({"median_ms": float(j["latency_ms"]), "spread_pct": float(j.get("spread_pct", float("nan"))),
                    "baseline_latency_ms": j.get("baseline_latency_ms"),
                    "baseline_spread_pct": j.get("baseline_spread_pct"),
                    "cagr_peak_memory_bytes": j.get("peak_memory_bytes"),
                    "optimize_seconds": j.get("optimize_seconds"),
                    "runs": (j.get("optimized") or {}).get("runs"),
                    "baseline_runs": (j.get("unoptimized") or {}).get("runs"),
                    "max_abs_diff_vs_unoptimized": j.get("max_abs_diff_vs_unoptimized"),
                    "policy": j.get("policy"), "raw": j})
    except (ValueError, KeyError, TypeError) as e:
        res["error"] = f"could not read cagr bench JSON ({e}): {w['out'][:200]}"
        return res
    res["baseline_rss_bytes"] = w["base"]
    res["peak_rss_bytes"] = max(0, w["peak"] - w["base"])
    kinds = [x.get("kind") for x in j.get("decisions") or []]
    res["decisions"] = len(kinds)
    res["reduced_precision"] = [x["label"] for x in j.get("decisions") or [] if x.get("kind") == "set_precision"]
    d = res["max_abs_diff_vs_unoptimized"]
    res["check"] = "n/a" if d is None else ("ok" if d <= CHECK_TOL else "MISMATCH")
    res["check_what"] = "optimized vs unoptimized plan (cagr bench)"
    res["ok"] = True
    if breakdown and a.breakdown and "--breakdown" in helptext:
        bd = [a.cagr, "bench", onnx_path, "--target", "cpu", "--batch", str(batch), "--threads", str(a.threads),
              "--json", "--inputs", npz, "--seconds", "0.2", "--runs", "20"] + shlex.split(a.cagr_args or "")
        bd += cagr_hw_args(a, bd)
        res["breakdown"] = cagr_breakdown(bd, env, a.timeout, lambda: pin(a.threads))
    return res


# --------------------------------------------------------------------------- parent side
def pin(threads):
    """Keeps the process (and its children) on the first `threads` cores."""
    if threads <= (os.cpu_count() or 1):
        os.sched_setaffinity(0, range(threads))


def thread_env(threads):
    env = dict(os.environ)
    for v in THREAD_VARS:
        env[v] = str(threads)
    return env


def spawn_engine(a, engine, model, onnx_path, npz, batch, tmp, ref, save):
    result = os.path.join(tmp, f"{model}.b{batch}.{engine}.json")
    cmd = [sys.executable, os.path.abspath(__file__), "--child", engine, "--model", model, "--onnx", onnx_path,
           "--inputs", npz, "--result", result, "--threads", str(a.threads), "--seconds", str(a.seconds),
           "--min-runs", str(a.min_runs), "--max-seconds", str(a.max_seconds), "--warmup", str(a.warmup)]
    if ref:
        cmd += ["--ref", ref]
    if save:
        cmd += ["--save-output", save]
    env = thread_env(a.threads)
    # a cold Inductor cache per process: compile time is a first compile, not a cache hit
    env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(tmp, f"inductor.{model}.b{batch}")
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=a.timeout)
    except subprocess.TimeoutExpired:
        return {"engine": engine, "ok": False, "error": f"timed out after {a.timeout} s"}
    if not os.path.exists(result):
        tail = (p.stderr or p.stdout).strip().splitlines()[-1:] or [""]
        return {"engine": engine, "ok": False, "error": f"child died (rc {p.returncode}): {tail[0][:300]}"}
    r = json.load(open(result))
    r["wall_seconds"] = time.time() - t0
    return r


def gen_inputs(model, batch, a, tmp):
    sys.path.insert(0, ZOO)
    spec = model_spec(model)
    out = os.path.join(tmp, f"{model}.b{batch}.npz")
    cmd = [sys.executable, os.path.join(ROOT, "data", "gen.py"), "--dataset", spec["dataset"], "--batch",
           str(batch), "--seed", str(a.seed), "--format", spec["format"], "--cap-rows", str(SMALL_ROWS),
           "--multi-hot", str(a.pooling), "-o", out]
    subprocess.run(cmd, check=True, capture_output=True)
    shown = ["python3", "data/gen.py"] + cmd[2:-1] + [f"{model}.b{batch}.npz"]
    return out, " ".join(shlex.quote(c) for c in shown)


def model_spec(model):
    """Dataset and input format of a zoo model, read from zoo/models.py without
    importing torch (the parent stays light)."""
    import ast
    tree = ast.parse(open(os.path.join(ZOO, "models.py")).read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "SPECS":
            for k, v in zip(node.value.keys, node.value.values):
                if ast.literal_eval(k) == model:
                    kw = {x.arg: x.value for x in v.keywords}
                    return {"dataset": ast.literal_eval(kw["dataset"]), "format": ast.literal_eval(kw["format"])}
    raise KeyError(model)


def roofline(a, onnx_path, batch, hw):
    """Modelled lower bound max(FLOPs / peak, bytes / last-level bandwidth) from
    `cagr inspect` counts and the host profile; None if either is missing."""
    if hw is None or not os.path.exists(a.cagr):
        return None
    cmd = [a.cagr, "inspect", onnx_path, "--batch", str(batch), "--pooling", str(a.pooling), "--json"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        tot = json.loads(p.stdout[p.stdout.index("{"):])["totals"]
    except (OSError, ValueError, KeyError, subprocess.TimeoutExpired):
        return None
    flops, nbytes = float(tot["flops"]), float(tot["bytes"])
    t_flop, t_mem = flops / hw["peak_flops"], nbytes / hw["bandwidth"]
    return {"flops": flops, "bytes": nbytes, "compute_ms": t_flop * 1e3, "memory_ms": t_mem * 1e3,
            "bound_ms": max(t_flop, t_mem) * 1e3, "bound_by": "compute" if t_flop >= t_mem else "memory",
            "counts": "modelled (cagr inspect totals)"}


def finish_case(case):
    """Best peer, ratios, CAGR speed-up and roofline fractions for one model x batch."""
    rows = case["engines"]
    peers = [r for r in rows if r["engine"] not in ("cagr", "cagr_unopt") and r.get("ok")]
    best = min(peers, key=lambda r: r["median_ms"]) if peers else None
    case["best_peer"] = best["engine"] if best else None
    for r in rows:
        if r.get("ok") and best:
            r["ratio_to_best_peer"] = r["median_ms"] / best["median_ms"]
        if r.get("ok") and case.get("roofline"):
            r["roofline_fraction"] = case["roofline"]["bound_ms"] / r["median_ms"]
    cagr = next((r for r in rows if r["engine"] == "cagr" and r.get("ok")), None)
    case["cagr_speedup_over_best_peer"] = best["median_ms"] / cagr["median_ms"] if (cagr and best) else None


def add_unoptimized_row(rows):
    """The unoptimized plan `cagr bench` also times, as its own row."""
    c = next((r for r in rows if r["engine"] == "cagr" and r.get("ok")), None)
    if c and c.get("baseline_latency_ms"):
        rows.append({"engine": "cagr_unopt", "ok": True, "median_ms": float(c["baseline_latency_ms"]),
                     "spread_pct": c.get("baseline_spread_pct"), "runs": c.get("baseline_runs"),
                     "note": "timed in the same `cagr bench` process (peak RSS is that process's)"})


def geomean(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def usable_engines(a, problems):
    """--engines, less TVM when `import tvm` fails (after one `pip install apache-tvm`)."""
    engines = [e for e in a.engines.split(",") if e]
    if "tvm" not in engines or subprocess.run([sys.executable, "-c", "import tvm"],
                                              capture_output=True).returncode == 0:
        return engines
    tail = "--no-tvm-install"
    if not a.no_tvm_install:
        log("tvm: not importable; trying `pip install apache-tvm` once")
        p = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "apache-tvm"],
                           capture_output=True, text=True)
        if p.returncode == 0 and subprocess.run([sys.executable, "-c", "import tvm"],
                                                capture_output=True).returncode == 0:
            return engines
        tail = "after `pip install apache-tvm`: " + (p.stderr.strip().splitlines() or ["import fails"])[-1][:200]
    problems.append(f"TVM skipped: `import tvm` fails ({tail})")
    return [e for e in engines if e != "tvm"]


def mismatch_problem(model, batch, r):
    if r["engine"] == "cagr":
        return (f"{model} b{batch} cagr: optimized plan differs from the unoptimized one by "
                f"{r['max_abs_diff_vs_unoptimized']:.1e} (> {CHECK_TOL})"
                + (f"; the plan has {len(r['reduced_precision'])} set_precision decisions"
                   if r.get("reduced_precision") else ""))
    return (f"{model} b{batch} {r['engine']}: output differs from ONNX Runtime "
            f"(max abs err {r['max_abs_err_vs_ort']:.1e} > {CHECK_TOL})")


def measure_engine(a, e, model, onnx_path, npz, batch, tmp, ref, first):
    if e == "cagr":
        return run_cagr(a, onnx_path, npz, batch, breakdown=first)
    return spawn_engine(a, e, model, onnx_path, npz, batch, tmp, None if e == "ort" else ref,
                        ref if e == "ort" and first else None)


def combine_rounds(rs):
    """One row from an engine's rounds: the median of the round medians (the
    same for the unoptimized plan), the largest peak, the first round's
    check, notes and breakdown; `round_ms` keeps every round's median."""
    ok = [r for r in rs if r.get("ok")]
    if len(rs) == 1 or not ok:
        return rs[0]
    out = dict(ok[0])
    out["round_ms"] = [r["median_ms"] for r in ok]
    out["median_ms"] = statistics.median(out["round_ms"])
    out["runs"] = sum(r.get("runs") or 0 for r in ok)
    base = [float(r["baseline_latency_ms"]) for r in ok if r.get("baseline_latency_ms")]
    if base:
        out["baseline_latency_ms"] = statistics.median(base)
    for k in ("peak_mb", "run_mb"):
        vals = [r[k] for r in ok if r.get(k) is not None]
        if vals:
            out[k] = max(vals)
    return out


def run_case(a, model, batch, engines, hw, tmp, problems):
    """Every engine on one model x batch, ONNX Runtime first (its output is the
    reference); with --rounds R the engines run in turn R times (interleaved,
    so a slow spell of the host falls on every engine alike), except those
    more than ROUND_SLACK x slower than the fastest in round 1, which cannot
    be the best peer."""
    onnx_path = os.path.join(ZOO, "onnx", f"{model}.{a.exporter}.onnx")
    npz, gen_cmd = gen_inputs(model, batch, a, tmp)
    case = {"model": model, "batch": batch, "onnx": os.path.relpath(onnx_path, ROOT), "inputs_command": gen_cmd,
            "roofline": roofline(a, onnx_path, batch, hw), "engines": [], "rounds": a.rounds}
    ref = os.path.join(tmp, f"{model}.b{batch}.ref.npz")
    order = sorted(engines, key=lambda e: e != "ort")
    results = {e: [] for e in order}
    for rnd in range(a.rounds):
        if rnd == 1:
            fastest = min((r[0]["median_ms"] for r in results.values() if r[0].get("ok")), default=None)
            order = [e for e in order if results[e][0].get("ok") and fastest is not None
                     and results[e][0]["median_ms"] <= ROUND_SLACK * fastest]
        for e in order:
            log(f"{model} b{batch} {e}" + (f" (round {rnd + 1}/{a.rounds})" if a.rounds > 1 else "") + " ...")
            r = measure_engine(a, e, model, onnx_path, npz, batch, tmp, ref, rnd == 0)
            results[e].append(r)
            log(f"  {e}: " + (f"{r['median_ms']:.3f} ms, spread {fmt(r.get('spread_pct'), '.1f')}%, "
                              f"check {check_cell(r)}" if r.get("ok") else f"FAILED {r.get('error')}"))
    for e, rs in results.items():
        r = combine_rounds(rs)
        case["engines"].append(r)
        if r.get("check") == "MISMATCH":
            problems.append(mismatch_problem(model, batch, r))
        elif not r.get("ok"):
            problems.append(f"{model} b{batch} {e}: {r.get('error')}")
    add_unoptimized_row(case["engines"])
    rank = {e: i for i, e in enumerate(engines)}
    rank["cagr_unopt"] = rank.get("cagr", -1) + 0.5
    case["engines"].sort(key=lambda r: rank[r["engine"]])
    finish_case(case)
    return case


def parent_main(a):
    t_start = time.time()
    out_dir = a.out_dir or ("/tmp/cagr_cpu_side_by_side" if a.quick else os.path.join(ROOT, "bench", "results"))
    os.makedirs(out_dir, exist_ok=True)
    models = [m for m in a.models.split(",") if m]
    batches = [int(b) for b in a.batches.split(",") if b]
    problems = []
    engines = usable_engines(a, problems)
    hw, host = host_profile(a.hw), host_info()
    if hw is None:
        problems.append(f"no usable host profile at {a.hw}: roofline column left empty")
    elif not same_cpu(hw, host["cpu"]):
        problems.append(f"the host profile {hw['path']} was measured on '{hw['measured_on']}' ({hw['vendor']}) "
                        f"but this host is '{host['cpu']}': the roofline % uses another machine's peaks; "
                        "re-measure with `build/cagr profile --target cpu` on this host and pass it with --hw")
    res = {"command": " ".join(shlex.quote(x) for x in [os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:]),
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "host": host, "versions": versions(), "threads": a.threads, "seed": a.seed, "pooling": a.pooling,
           "exporter": a.exporter, "warmup": a.warmup, "seconds": a.seconds, "min_runs": a.min_runs,
           "max_seconds": a.max_seconds, "rounds": a.rounds, "quick": a.quick, "models": models, "batches": batches,
           "engines": engines, "hw_profile": hw, "load_start": "%.2f %.2f %.2f" % os.getloadavg(),
           "cases": [], "problems": problems}
    with tempfile.TemporaryDirectory(prefix="cagr_cpu_bench_") as tmp:
        res["cases"] = [run_case(a, m, b, engines, hw, tmp, problems) for m in models for b in batches]
    res["geomean"] = {m: geomean([c["cagr_speedup_over_best_peer"] for c in res["cases"] if c["model"] == m])
                      for m in models}
    res["load_end"] = "%.2f %.2f %.2f" % os.getloadavg()
    res["wall_seconds"] = time.time() - t_start
    base = os.path.join(out_dir, "cpu_side_by_side")
    try:
        write_png(res, base + ".png")
    except ImportError as e:
        problems.append(f"no chart: {e}")
    with open(base + ".json", "w") as f:
        json.dump(res, f, indent=1)
    write_md(res, base + ".md")
    log(f"wrote {base}.md, .json, .png")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--batches", default=None, help="default 256,4096 (--quick: 256)")
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--threads", type=int, default=2, help="threads for every engine (default 2)")
    ap.add_argument("--quick", action="store_true",
                    help="batch 256 only, few runs, output to /tmp/cagr_cpu_side_by_side (smoke test)")
    ap.add_argument("--seconds", type=float, default=None, help="min timing seconds per engine (default 2)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="time the engines in turn this many times per model x batch and report the median of "
                         f"the round medians (engines over {ROUND_SLACK:g}x the fastest run once; default 1)")
    ap.add_argument("--min-runs", type=int, default=None, help="min timed runs per engine (default 50)")
    ap.add_argument("--max-seconds", type=float, default=None,
                    help="stop after this long once 3 runs are in (default 30)")
    ap.add_argument("--warmup", type=int, default=None, help="warm-up runs (default 5)")
    ap.add_argument("--exporter", choices=["dynamo", "ts"], default="dynamo",
                    help="which zoo export: zoo/onnx/<model>.<exporter>.onnx (default dynamo)")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--pooling", type=int, default=1, help="ids per DLRM bag (data/gen.py --multi-hot)")
    ap.add_argument("--out-dir", default=None, help="default bench/results (--quick: /tmp/cagr_cpu_side_by_side)")
    ap.add_argument("--cagr", default=os.path.join(ROOT, "build", "cagr"))
    ap.add_argument("--cagr-args", default="", help="extra arguments for `cagr bench`")
    ap.add_argument("--hw", default=os.path.join(ROOT, "bench", "results", "hw", "host-cpu.json"),
                    help="measured host profile: CAGR plans for it (passed to `cagr bench`) and the roofline uses it")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per engine process")
    ap.add_argument("--no-breakdown", dest="breakdown", action="store_false",
                    help="skip the per-kernel breakdown of CAGR's plan (one more `cagr bench --breakdown` run)")
    ap.add_argument("--no-tvm-install", action="store_true", help="do not try `pip install apache-tvm`")
    # child mode (one engine, one model x batch); not for direct use
    ap.add_argument("--child", choices=ENGINES[1:], help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    ap.add_argument("--onnx", help=argparse.SUPPRESS)
    ap.add_argument("--inputs", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    ap.add_argument("--ref", help=argparse.SUPPRESS)
    ap.add_argument("--save-output", help=argparse.SUPPRESS)
    a = ap.parse_args()
    q = a.quick
    for k, full, quick in [("batches", "256,4096", "256"), ("seconds", 2.0, 0.3), ("min_runs", 50, 10),
                           ("max_seconds", 30.0, 5.0), ("warmup", 5, 3)]:
        if getattr(a, k) is None:
            setattr(a, k, quick if q else full)
    if a.child:
        return child_main(a)
    return parent_main(a)


if __name__ == "__main__":
    sys.exit(main())
