#!/usr/bin/env python3
"""CUDA side-by-side (issue 6, item 5): CAGR, PyTorch eager, TorchScript,
torch.compile (default, reduce-overhead, max-autotune), eager + CUDA Graph and a
hand-optimized PyTorch version, measured in one run on the same GPU and inputs,
on the zoo's DLRM (dlrm_criteo), DeepFM, xDeepFM and DCN-v2 at batch 256 and
4096, in fp32 (TF32 off), tf32 and bf16 (autocast; cells whose error against
fp32 exceeds --bf16-tol are not timed). Everything is measured on that GPU
except the roofline bound (modelled from the H100's or H200's datasheet peaks).

  python3 bench/cuda/run.py --out $OUT                          # everything (more than one 10-minute call)
  python3 bench/cuda/run.py --batches 4096 --precisions fp32,tf32 --engines eager,compile,cudagraph,hand,cagr
  python3 bench/cuda/run.py --merge a/cuda_side_by_side.json b/cuda_side_by_side.json --out bench/results
  python3 bench/cuda/run.py --device cpu --quick   # smoke test without a GPU -> /tmp/cagr_cuda_side_by_side/

Weights without onnx: the GPU machine has torch but not the onnx package, so
the PyTorch peers (zoo/models.py, as in bench/cpu/run.py) take their weights
from the ONNX initializers through onnx_weights.py, a protobuf-free reader of
the ONNX wire format that also follows the zoo's external-data files. Nothing
needs preparing or carrying: zoo/ travels with the working tree. Where onnx is
installed, the run cross-checks the reader against onnx.numpy_helper.

Results go to --out DIR: cuda_side_by_side.partial.jsonl gets one line per
engine as soon as it is measured, and cuda_side_by_side.{json,md} are rewritten
after every engine, so a killed run still leaves a report; the .png is drawn
at the end (and by --merge). --deadline stops starting new engines after that
many seconds. Modules: engines.py (PyTorch engines, timing, memory), hand.py
(hand-optimized models), cagr.py (`cagr bench` / `cagr inspect`), report.py.
"""
import argparse
import copy
import datetime
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import shared  # noqa: E402  (also puts bench/cpu and zoo on sys.path)

ROOT = shared.ROOT
MODELS = ["dlrm_criteo", "deepfm", "xdeepfm", "dcnv2"]
ENGINES = ["eager", "torchscript", "compile", "compile_ro", "max_autotune", "cudagraph", "hand", "cagr"]
SMALL_ROWS = 1000  # the zoo's ONNX files are the 'small' size: tables capped at 1000 rows
BASENAME = "cuda_side_by_side"


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def csv(s, conv=str):
    return [conv(x) for x in s.split(",") if x]


def onnx_path(model):
    return os.path.join(shared.ZOO, "onnx", f"{model}.dynamo.onnx")


# --------------------------------------------------------------------------- one model x batch
def zoo_module(model):
    """The zoo module (CPU) with every parameter the ONNX file holds under the
    same name and shape; the count says how many that was."""
    import torch

    import models  # zoo/models.py
    import onnx_weights
    m, spec = models.build(model, "small")
    inits = onnx_weights.read_initializers(onnx_path(model))
    state = m.state_dict()
    mine = {k: torch.from_numpy(inits[k].copy()) for k, v in state.items()
            if k in inits and tuple(inits[k].shape) == tuple(v.shape)}
    m.load_state_dict(mine, strict=False)
    note = capturable(m)
    info = {"weights_loaded": len(mine), "weights_total": len(state),
            "weights_check": onnx_weights.check_against_onnx(onnx_path(model))}
    if note:
        info["module_change"] = note
    return m.eval(), spec, info


def capturable(m):
    """The zoo DLRM indexes its interaction with Python lists (Z[:, li, lj]):
    every call builds index tensors on the host and copies them to the GPU with
    a synchronisation, which also makes the model impossible to capture in a
    CUDA Graph. For every PyTorch engine alike, the lists become device-resident
    index buffers (same values, same output); returns a note, or None."""
    import torch
    if not (isinstance(getattr(m, "li", None), list) and isinstance(getattr(m, "lj", None), list)):
        return None
    li, lj = m.li, m.lj
    del m.li, m.lj
    m.register_buffer("li", torch.tensor(li, dtype=torch.int64), persistent=False)
    m.register_buffer("lj", torch.tensor(lj, dtype=torch.int64), persistent=False)
    return "interaction index lists li/lj made int64 buffers (no per-call host-to-device copy)"


def flop_count(a, model, batch, zoo, args_cpu):
    """(flops, param bytes, source): `cagr inspect` counts, else torch's flop
    counter on meta tensors (matmul / conv / bmm only)."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    import cagr
    got = cagr.inspect_counts(a.cagr, onnx_path(model), batch, a.pooling)
    if got:
        return got["flops"], got["param_bytes"], got["source"]
    meta = copy.deepcopy(zoo).to("meta")
    with FlopCounterMode(display=False) as fc, torch.no_grad():
        meta(*(t.to("meta") for t in args_cpu))
    params = sum(t.numel() * t.element_size() for t in zoo.state_dict().values())
    return float(fc.get_total_flops()), float(params), "torch.utils.flop_counter on the zoo module (matmul/conv)"


def prepare_case(a, model, batch, device, tmp):
    """Inputs (numpy -> npz for CAGR, tensors on the device), the eager fp32
    reference output, and the 'case' record with FLOPs and bytes."""
    import numpy as np
    import torch

    import engines
    import models
    zoo, spec, wnote = zoo_module(model)
    x = models.make_inputs(model, "small", batch, a.seed, multi_hot=a.pooling)
    order = [n for n, _, _ in spec["inputs"]]
    npz = os.path.join(tmp, f"{model}.b{batch}.npz")
    np.savez(npz, **{n: x[n] for n in order})
    args_cpu = tuple(torch.from_numpy(x[n]) for n in order)
    args = tuple(t.to(device) for t in args_cpu)
    engines.set_precision("fp32")
    ref_model = copy.deepcopy(zoo).to(device)
    with torch.no_grad():
        ref = ref_model(*args).float().cpu()
    del ref_model
    flops, params, source = flop_count(a, model, batch, zoo, args_cpu)
    rec = {"kind": "case", "model": model, "batch": batch, "flops": flops, "flops_source": source,
           "param_bytes": params, "io_bytes": float(sum(t.nbytes for t in args_cpu) + ref.numel() * 4)}
    rec.update(wnote)
    return zoo, args, ref, npz, rec


# --------------------------------------------------------------------------- the run
def engine_list(a, device):
    import engines
    out = []
    for e in csv(a.engines):
        out += engines.HAND_VARIANTS[device.type] if e == "hand" else [e]
    return out


def not_here(a, engine, batch, precision, model=None):
    """Why a selected engine is left out of this cell by the run's options, or None."""
    if model is not None and f"{engine}:{model}" in csv(a.skip):
        return (f"left out by --skip {engine}:{model}" + (f" ({a.skip_why})" if a.skip_why else ""))
    if engine != "max_autotune":
        return None
    if batch not in csv(a.max_autotune_batches, int):
        return f"max-autotune runs at batch {a.max_autotune_batches} only (--max-autotune-batches)"
    if precision not in csv(a.max_autotune_precisions):
        return f"max-autotune runs in {a.max_autotune_precisions} only (--max-autotune-precisions)"
    return None


def measure_cell(a, engine, case, npz, target):
    import cagr
    import engines
    reason = not_here(a, engine, case.batch, case.precision, case.model)
    if reason:
        return {"kind": "engine", "model": case.model, "batch": case.batch, "precision": case.precision,
                "engine": engine, "device": str(case.device), "ok": False, "skipped": reason}
    if engine == "cagr":
        engines.release()
        rec = cagr.run(a.cagr, onnx_path(case.model), npz, case, target, a.cagr_timeout, a.cagr_args,
                       engines.errors)
        if rec.get("max_abs_err") is not None:
            rec["check"] = engines.check(rec, case.precision, case.opts)
        return rec
    return engines.run_engine(engine, case)


class Sink:
    """Appends records to the .jsonl and rewrites the report after each one."""

    def __init__(self, a, run):
        self.a, self.run, self.records = a, run, []
        self.path = os.path.join(a.out, BASENAME + ".partial.jsonl")
        with open(self.path, "w") as f:
            f.write(json.dumps(run) + "\n")

    def add(self, rec, chart=False):
        import report
        if rec is not None:
            self.records.append(rec)
            with open(self.path, "a") as f:
                f.write(json.dumps(rec) + "\n")
        report.write_all(self.a.out, [self.run], self.records, self.run["problems"], chart=chart)


def describe(r):
    if r.get("ok"):
        return f"{r['median_ms']:.3f} ms (p10-p90 {r.get('p10_ms') or 0:.3f}-{r.get('p90_ms') or 0:.3f})" + (
            f", check {r['check']}" if r.get("check") else "")
    return "skipped: " + r["skipped"] if r.get("skipped") else "FAILED " + str(r.get("error"))


def run_all(a, device, sink):
    import engines
    opts = engines.Options(repeats=a.repeats, warmup=a.warmup, repeat_ms=a.repeat_ms, rel_tol=a.bf16_tol)
    target = a.cagr_target or ("cuda" if device.type == "cuda" else "cpu")
    names = engine_list(a, device)
    engines.warm_device(device)
    start = time.time()
    with tempfile.TemporaryDirectory(prefix="cagr_cuda_side_by_side_") as tmp:
        for model in csv(a.models):
            for batch in csv(a.batches, int):
                try:
                    zoo, args, ref, npz, case_rec = prepare_case(a, model, batch, device, tmp)
                except Exception as e:  # noqa: BLE001  (a model that cannot be set up is a problem line)
                    sink.run["problems"].append(f"{model} b{batch}: not measured, {engines.first_line(e)}")
                    log(f"{model} b{batch}: {engines.first_line(e)}")
                    continue
                sink.add(case_rec)
                for prec in a.precision_list:
                    engines.set_precision(prec)
                    case = engines.Case(model, batch, prec, device, zoo, args, ref, opts)
                    for e in names:
                        if a.deadline and time.time() - start > a.deadline:
                            sink.run["deadline_hit"] = True
                            log(f"--deadline {a.deadline} s reached: stopping before {model} b{batch} {prec} {e}")
                            return
                        log(f"{model} b{batch} {prec} {e} ...")
                        rec = measure_cell(a, e, case, npz, target)
                        log(f"  {describe(rec)}")
                        sink.add(rec)


def gpu_info(device):
    import torch
    p = torch.cuda.get_device_properties(device)
    g = {"name": p.name, "memory_gib": p.total_memory / 2**30, "sms": p.multi_processor_count,
         "capability": f"{p.major}{p.minor}"}
    try:
        q = subprocess.run(["nvidia-smi", "--query-gpu=driver_version,clocks.max.sm,power.limit",
                            "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
        if q.returncode == 0 and q.stdout.strip():
            drv, clk, pwr = (x.strip() for x in q.stdout.strip().splitlines()[0].split(","))
            g.update({"driver": drv, "max_sm_clock": clk, "power_limit": pwr})
    except (OSError, subprocess.TimeoutExpired, ValueError):
        pass
    return g


def run_meta(a, device):
    import torch
    v = shared.versions()
    v["cuda (torch)"] = torch.version.cuda or "none"
    try:
        import triton
        v["triton"] = triton.__version__
    except ImportError:
        v["triton"] = "not installed"
    problems = list(a.notes)
    gpu = gpu_info(device) if device.type == "cuda" else None
    if gpu and not any(n in gpu["name"] for n in ("H100", "H200")):
        problems.append(f"the bound uses H200 datasheet peaks but this GPU is {gpu['name']}")
    if device.type != "cuda":
        problems.append("smoke test on the CPU: CUDA-only engines skipped, no device memory figures, "
                        "no fraction of the (H200) bound; hand-optimized = faster of eager and compile default")
    import engines
    return {"kind": "run", "id": f"{time.time():.0f}-{os.getpid()}",
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "command": " ".join(shlex.quote(x) for x in ["python3", os.path.relpath(os.path.abspath(sys.argv[0]), ROOT)]
                                + sys.argv[1:]),
            "device": str(device), "gpu": gpu, "host": shared.host_info(), "versions": v,
            "inputs": f"data/gen.py generators (zoo/models.make_inputs), seed {a.seed}, ids capped at {SMALL_ROWS} "
                      f"rows, DLRM bags of {a.pooling} id(s)",
            "cpu_threads": torch.get_num_threads(), "warmup": a.warmup, "repeats": a.repeats,
            "repeat_ms": a.repeat_ms, "rel_tol": a.bf16_tol,
            "fp32_abs_tol": engines.FP32_ABS_TOL,
            "timer": "CUDA events" if device.type == "cuda" else "time.perf_counter (CPU)",
            "caches": "warm" if a.warm_caches else "disabled (cold compiles)",
            "problems": problems}


def merge(a):
    import report
    runs, records = report.load(a.merge)
    by_id = {}
    for r in runs:
        by_id[r.get("id", r.get("date"))] = r  # the last line of a run carries its wall time
    runs = sorted(by_id.values(), key=lambda r: r.get("date", ""))
    problems = [p for r in runs for p in r.get("problems", [])]
    os.makedirs(a.out, exist_ok=True)
    cases = report.write_all(a.out, runs, records, sorted(set(problems), key=problems.index))
    log(f"merged {len(records)} records of {len(runs)} run(s) into {len(cases)} cells: "
        f"{os.path.join(a.out, BASENAME)}.{{md,json,png}}")


def parse():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--batches", default=None, help="default 256,4096 (--quick: 256)")
    ap.add_argument("--precisions", default="fp32,tf32,bf16")
    ap.add_argument("--engines", default=",".join(ENGINES),
                    help="any of " + ",".join(ENGINES) + " ('hand' = both hand-optimized variants)")
    ap.add_argument("--max-autotune-batches", default="4096", help="batches max-autotune runs at (default 4096)")
    ap.add_argument("--max-autotune-precisions", default="fp32,tf32,bf16")
    ap.add_argument("--skip", default="", help="ENGINE:MODEL pairs not to run, comma-separated "
                    "(e.g. torchscript:dlrm_criteo); the cell is reported as skipped with --skip-why")
    ap.add_argument("--skip-why", default="", help="the reason the report gives for --skip")
    ap.add_argument("--repeats", type=int, default=None, help="timed repeats per engine (default 20, --quick 3)")
    ap.add_argument("--warmup", type=int, default=None, help="warm-up calls (default 10, --quick 2)")
    ap.add_argument("--repeat-ms", type=float, default=None, help="length of one repeat (default 10, --quick 2)")
    ap.add_argument("--out", default=None, help="output folder (default bench/results; --quick: /tmp/...)")
    ap.add_argument("--merge", nargs="+", help="merge these .json / .partial.jsonl files into --out, run nothing")
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    ap.add_argument("--quick", action="store_true", help="smoke test: batch 256, 3 short repeats")
    ap.add_argument("--deadline", type=float, default=0, help="start no engine after this many seconds")
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (default: torch's choice)")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--pooling", type=int, default=1, help="ids per DLRM bag")
    ap.add_argument("--bf16-tol", type=float, default=5e-2,
                    help="max |out - ref| / max |ref| for a timed bf16 cell (tf32: flagged only)")
    ap.add_argument("--warm-caches", action="store_true", help="keep Inductor/Triton caches (default: cold)")
    ap.add_argument("--cagr", default=os.path.join(ROOT, "build", "cagr"))
    ap.add_argument("--cagr-target", default=None, help="default cuda (--device cpu: cpu)")
    ap.add_argument("--cagr-args", default="", help="extra arguments for `cagr bench`")
    ap.add_argument("--cagr-timeout", type=int, default=300)
    a = ap.parse_args()
    for k, full, quick in [("batches", "256,4096", "256"), ("repeats", 20, 3), ("warmup", 10, 2),
                           ("repeat_ms", 10.0, 2.0),
                           ("out", os.path.join(ROOT, "bench", "results"), "/tmp/cagr_cuda_side_by_side")]:
        if getattr(a, k) is None:
            setattr(a, k, quick if a.quick else full)
    return a


def main():
    a = parse()
    if a.merge:
        return merge(a)
    if not a.warm_caches:  # before torch is imported: compile times are cold compiles
        os.environ.setdefault("TORCHINDUCTOR_FORCE_DISABLE_CACHES", "1")
        os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="cagr_triton_cache_"))
    import torch
    if a.device == "cuda" and not torch.cuda.is_available():
        log("no CUDA device here; for a smoke test use --device cpu --quick")
        return 2
    device = torch.device(a.device)
    if a.threads:
        torch.set_num_threads(a.threads)
    a.notes, a.precision_list = [], csv(a.precisions)
    if device.type != "cuda" and "tf32" in a.precision_list:
        a.precision_list.remove("tf32")
        a.notes.append("tf32 skipped: TF32 is a CUDA matmul mode")
    os.makedirs(a.out, exist_ok=True)
    run = run_meta(a, device)
    sink = Sink(a, run)
    t0 = time.time()
    try:
        run_all(a, device, sink)
    finally:
        run["wall_s"] = time.time() - t0
        with open(sink.path, "a") as f:
            f.write(json.dumps(run) + "\n")
        sink.add(None, chart=True)
        log(f"wrote {os.path.join(a.out, BASENAME)}.{{md,json,png}} and .partial.jsonl")
    return 0


if __name__ == "__main__":
    sys.exit(main())
