"""The PyTorch engines of the CUDA side-by-side, run in this process on one
model x batch x precision ("case"): how each is built, how it is timed (CUDA
events around N back-to-back calls, repeated), its peak memory
(torch.cuda.max_memory_allocated, reset between engines), its optimization
time (build + first call) and its error against eager fp32.

Precisions: fp32 = TF32 off for matmul and cuDNN; tf32 = TF32 on; bf16 = the
fp32 model under torch.autocast(bfloat16) (TF32 off for what stays fp32),
except the hand-optimized model, which stores its weights in bf16.
"""
import contextlib
import copy
import gc
import math
import os
import time
from dataclasses import dataclass, field

import torch

import hand
from names import FRAMEWORK_PEERS, LABELS  # noqa: F401  (re-exported)
from shared import quantile

# `--engines hand` means these variants; the report keeps the faster one as "hand-optimized".
HAND_VARIANTS = {"cuda": ["hand_graph", "hand_ro"], "cpu": ["hand_eager", "hand_compile"]}
CUDA_ONLY = {"compile_ro", "cudagraph", "hand_graph", "hand_ro"}
FP32_ABS_TOL = 1e-4  # fp32 engines must match eager fp32 this closely (max abs error)


@dataclass
class Options:
    repeats: int = 20
    warmup: int = 10
    repeat_ms: float = 10.0  # each repeat runs enough back-to-back calls to last about this long
    max_iters: int = 1000
    rel_tol: float = 5e-2  # tf32 / bf16: max |out - ref| / max |ref|; bf16 cells above it are not timed


@dataclass
class Case:
    model: str
    batch: int
    precision: str
    device: torch.device
    zoo: torch.nn.Module  # the zoo module on the CPU, weights from the ONNX file
    args: tuple  # inputs on the device
    ref: torch.Tensor  # eager fp32 (TF32 off) output, on the CPU
    opts: Options = field(default_factory=Options)


def set_precision(precision):
    tf32 = precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32


def autocast(case):
    if case.precision == "bf16":
        # no weight-cast cache: it must not outlive a call (and must be off under CUDA Graph capture)
        return torch.autocast(case.device.type, dtype=torch.bfloat16, cache_enabled=False)
    return contextlib.nullcontext()


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


# --------------------------------------------------------------------------- builders
def _caller(module, case, amp=True):
    def fn():
        with torch.no_grad(), (autocast(case) if amp else contextlib.nullcontext()):
            return module(*case.args)
    return fn


def _fresh(case):
    """A private copy of the zoo module on the device: every engine owns (and is
    charged for) its weights."""
    return copy.deepcopy(case.zoo).to(case.device)


def _graphed(fn):
    """fn captured in one CUDA Graph (warm-up on a side stream first, as the
    torch.cuda.graphs documentation prescribes); replay returns the static output."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = fn()

    def replay():
        graph.replay()
        return out
    return replay


def _compiled(module, mode):
    torch._dynamo.reset()  # cold: no graphs, guards or CUDA Graph trees of earlier engines
    return torch.compile(module, mode=mode) if mode else torch.compile(module)


def _hand(case):
    dtype = torch.bfloat16 if case.precision == "bf16" else torch.float32
    return hand.build(case.model, case.zoo, dtype).to(case.device)


def torchscript_fuser():
    """TorchScript's TensorExpr fuser is off unless CAGR_TS_FUSER=on (the
    profiling executor still specializes the graph): with it on, the frozen
    module's first call hung for minutes on the H200 (DLRM 4096 on
    2026-12-01, xDeepFM 256 on 2026-12-02), taking the rest of the run with it."""
    off = os.environ.get("CAGR_TS_FUSER", "") != "on"
    torch._C._jit_set_texpr_fuser_enabled(not off)
    return "TensorExpr fuser off (CAGR_TS_FUSER=off)" if off else None


def build_torchscript(case):
    m = _fresh(case)
    fuser = torchscript_fuser()
    with torch.no_grad(), autocast(case):
        ts = torch.jit.freeze(torch.jit.trace(m, case.args, check_trace=False).eval())
    info = {"note": fuser} if fuser else {}
    if case.precision == "bf16":
        has_bf16 = "BFloat16" in str(ts.graph)
        cast = ("traced under autocast: casts recorded, weights frozen as bf16 constants" if has_bf16
                else "traced under autocast but the graph has no bf16 tensor: runs in fp32")
        info["note"] = f"{fuser}; {cast}" if fuser else cast
    return _caller(ts, case, amp=False), info


HAND_NOTE = {"bf16": "weights stored in bf16 (no autocast)"}
BUILDERS = {
    "eager": lambda c: (_caller(_fresh(c), c), {}),
    "torchscript": build_torchscript,
    "compile": lambda c: (_caller(_compiled(_fresh(c), None), c), {}),
    "compile_ro": lambda c: (_caller(_compiled(_fresh(c), "reduce-overhead"), c), {}),
    "max_autotune": lambda c: (_caller(_compiled(_fresh(c), "max-autotune"), c), {}),
    "cudagraph": lambda c: (_graphed(_caller(_fresh(c), c)), {}),
    "hand_graph": lambda c: (_graphed(_caller(_hand(c), c, amp=False)), {"note": HAND_NOTE.get(c.precision)}),
    "hand_ro": lambda c: (_caller(_compiled(_hand(c), "reduce-overhead"), c, amp=False),
                          {"note": HAND_NOTE.get(c.precision)}),
    "hand_eager": lambda c: (_caller(_hand(c), c, amp=False), {"note": HAND_NOTE.get(c.precision)}),
    "hand_compile": lambda c: (_caller(_compiled(_hand(c), None), c, amp=False),
                               {"note": HAND_NOTE.get(c.precision)}),
}


def skip_reason(engine, case):
    if engine not in BUILDERS:
        return f"unknown engine '{engine}'"
    if case.device.type != "cuda" and engine in CUDA_ONLY:
        return "CUDA-only engine (this run is on the CPU)"
    if engine.startswith("hand") and case.model not in hand.BUILDERS:
        return f"no hand-optimized version of {case.model}"
    return None


# --------------------------------------------------------------------------- measuring
def timed(fn, device, opts):
    """Median and p10/p90 over opts.repeats repeats of N back-to-back calls,
    N chosen so a repeat lasts about opts.repeat_ms; CUDA events on a GPU."""
    sync(device)
    t0 = time.perf_counter()
    fn()
    sync(device)
    one = max(time.perf_counter() - t0, 1e-6)
    iters = max(1, min(opts.max_iters, math.ceil(opts.repeat_ms / 1e3 / one)))
    ms = []
    for _ in range(opts.repeats):
        if device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(iters):
                fn()
            end.record()
            end.synchronize()
            ms.append(start.elapsed_time(end) / iters)
        else:
            t0 = time.perf_counter()
            for _ in range(iters):
                fn()
            ms.append((time.perf_counter() - t0) * 1e3 / iters)
    ms.sort()
    med = quantile(ms, 0.5)
    return {"median_ms": med, "p10_ms": quantile(ms, 0.1), "p90_ms": quantile(ms, 0.9),
            "spread_pct": 100 * (quantile(ms, 0.9) - quantile(ms, 0.1)) / med if med > 0 else 0.0,
            "repeats": len(ms), "iters_per_repeat": iters,
            "timer": "CUDA events" if device.type == "cuda" else "time.perf_counter"}


def errors(out, ref):
    """Max abs error, max abs error / max |ref| (the gated 'rel' error) and the
    largest elementwise relative error, all against eager fp32."""
    o = torch.as_tensor(out).detach().to("cpu", torch.float64).reshape(ref.shape)
    r = ref.to(torch.float64)
    d = (o - r).abs()
    return {"max_abs_err": float(d.max()), "max_rel_err": float(d.max() / r.abs().max().clamp_min(1e-30)),
            "max_elem_rel_err": float((d / r.abs().clamp_min(1e-30)).max())}


def check(rec, precision, opts):
    """'ok' / 'MISMATCH' / 'inaccurate' (bf16 over the tolerance: not timed)."""
    if precision == "fp32":
        return "ok" if rec["max_abs_err"] <= FP32_ABS_TOL else "MISMATCH"
    if rec["max_rel_err"] <= opts.rel_tol:
        return "ok"
    return "inaccurate" if precision == "bf16" else "MISMATCH"


class Memory:
    """Device memory of one engine relative to what was allocated before it was
    built (inputs, reference); None on the CPU."""

    def __init__(self, device):
        self.cuda = device.type == "cuda"
        self.device = device
        self.base = 0
        if self.cuda:
            gc.collect()
            torch.cuda.synchronize(device)
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats(device)
            self.base = torch.cuda.memory_allocated(device)

    def peak(self, reset=False):
        if not self.cuda:
            return None
        torch.cuda.synchronize(self.device)
        p = torch.cuda.max_memory_allocated(self.device) - self.base
        if reset:
            torch.cuda.reset_peak_memory_stats(self.device)
        return p


def warm_device(device):
    """cuBLAS / cuBLASLt handles and workspaces (kept by PyTorch for the process)
    created before any engine, so the first engine is not charged for them."""
    if device.type != "cuda":
        return
    x = torch.randn(256, 256, device=device)
    # fp32 with TF32 off and on: cuBLAS keeps a workspace per math mode, made
    # lazily, which the first TF32 cell would otherwise be charged (~33 MB).
    saved = torch.backends.cuda.matmul.allow_tf32
    for tf32 in (False, True):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        for dtype in (torch.float32, torch.bfloat16):
            torch.addmm(x.to(dtype), x.to(dtype), x.to(dtype))
            torch.bmm(x.to(dtype).unsqueeze(0), x.to(dtype).unsqueeze(0))
    torch.backends.cuda.matmul.allow_tf32 = saved
    torch.cuda.synchronize(device)


def release():
    torch._dynamo.reset()
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def first_line(e):
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0][:300] if text else ''}"


def run_engine(engine, case):
    """One engine on one case -> a record (never raises)."""
    rec = {"kind": "engine", "model": case.model, "batch": case.batch, "precision": case.precision,
           "engine": engine, "device": str(case.device), "ok": False}
    reason = skip_reason(engine, case)
    if reason:
        rec["skipped"] = reason
        return rec
    fn = None
    try:
        # PyTorch drops its cuBLAS workspaces when a CUDA graph capture begins
        # (the cudagraph / reduce-overhead engines of an earlier cell), so the
        # next engine that needs one would be charged ~33 MB for it: on
        # 2026-12-02 xDeepFM 256's eager peak read 91.5 or 126 MB depending
        # on which precision ran first. Re-made before every engine's baseline.
        warm_device(case.device)
        mem = Memory(case.device)
        t0 = time.perf_counter()
        fn, info = BUILDERS[engine](case)
        sync(case.device)
        t1 = time.perf_counter()
        out = fn()
        sync(case.device)
        rec.update({k: v for k, v in info.items() if v is not None})
        rec.update({"build_s": t1 - t0, "first_call_s": time.perf_counter() - t1,
                    "optimize_s": time.perf_counter() - t0})
        rec.update(errors(out, case.ref))
        out = None  # reduce-overhead overwrites it on the next call anyway
        rec["check"] = check(rec, case.precision, case.opts)
        if rec["check"] == "inaccurate":
            rec["skipped"] = (f"bf16 max rel error {rec['max_rel_err']:.1e} > {case.opts.rel_tol:g}: "
                              "not timed")
            return rec
        for _ in range(case.opts.warmup):
            fn()
        rec["build_peak_bytes"] = mem.peak(reset=True)
        rec.update(timed(fn, case.device, case.opts))
        rec["peak_bytes"] = mem.peak()
        rec["ok"] = True
    except Exception as e:  # noqa: BLE001  (an engine failure is a table entry, not a crash)
        rec["error"] = first_line(e)
    finally:
        fn = None
        release()
    return rec
