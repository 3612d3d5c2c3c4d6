#!/usr/bin/env python3
"""Measures whole zoo models op by op (PyTorch eager, one kernel per op) so the
cost model's prediction of the unoptimised plan can be checked against a real
timing on the same machine. Prints / writes JSON records:
  {model, batch, device, median_ms, p10_ms, p90_ms, reps, threads, torch}

  python3 bench/cost_model_accuracy/measure_models.py --device cpu|cuda \
      --batches 256,4096 [--models dlrm_avazu,...] -o measured.json
Needs torch (not part of the C++ build)."""
import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "zoo"))

import torch  # noqa: E402

import models  # noqa: E402  (zoo/models.py)

DEFAULT_MODELS = "dlrm_avazu,dlrm_criteo,deepfm,xdeepfm,dcnv2,wide_deep,ngcf,autoint"


def time_model(m, args, device, reps, min_seconds):
    def once():
        if device == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        m(*args)
        if device == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter() - t0

    for _ in range(5):
        once()
    times = []
    start = time.perf_counter()
    while len(times) < reps or time.perf_counter() - start < min_seconds:
        times.append(once())
        if len(times) >= 10 * reps:
            break
    times.sort()
    pick = lambda q: times[min(len(times) - 1, int(q * len(times)))]  # noqa: E731
    return statistics.median(times), pick(0.1), pick(0.9), len(times)


def graph_replay(m, args):
    """The same op sequence captured once in a CUDA Graph: launch gaps shrink to
    the graph's per-node cost, which is what a C++ runtime issuing one kernel per
    op approaches; eager adds Python and dispatcher time per op."""
    static = [a.clone() for a in args]
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            m(*static)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        m(*static)
    return lambda *unused: g.replay()


def ort_session(name, threads):
    """ONNX Runtime on the committed export with every graph optimisation off:
    it runs the ONNX ops one by one, the closest executed analogue of CAGR's
    unoptimised plan imported with --no-patterns."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.intra_op_num_threads = threads
    so.log_severity_level = 3
    path = os.path.join(HERE, "..", "..", "zoo", "onnx", f"{name}.dynamo.onnx")
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"]), ort.__version__


def measure_ort(a):
    records = []
    for name in a.models.split(","):
        sess, version = ort_session(name, torch.get_num_threads())
        for b in [int(x) for x in a.batches.split(",")]:
            x = models.make_inputs(name, "small", b, seed=11, multi_hot=1)
            med, p10, p90, n = time_model(lambda *unused: sess.run(None, x), [], "cpu", a.reps, a.min_seconds)
            rec = {"model": name, "batch": b, "device": "cpu", "median_ms": med * 1e3, "p10_ms": p10 * 1e3,
                   "p90_ms": p90 * 1e3, "reps": n, "threads": torch.get_num_threads(), "torch": "n/a",
                   "onnxruntime": version,
                   "what": "measured: ONNX Runtime, all graph optimisations off, sequential, dynamo export"}
            records.append(rec)
            print(json.dumps(rec), flush=True)
            if a.out:
                with open(a.out, "w") as f:
                    json.dump(records, f, indent=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", default="torch", choices=["torch", "ort"])
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--batches", default="256,4096")
    ap.add_argument("--models", default=DEFAULT_MODELS)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--min-seconds", type=float, default=0.5)
    ap.add_argument("-o", "--out", default="")
    a = ap.parse_args()
    if a.engine == "ort":
        return measure_ort(a)
    if a.device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    records = []
    for name in a.models.split(","):
        m, spec = models.build(name, "small")
        m = m.to(a.device)
        for b in [int(x) for x in a.batches.split(",")]:
            x = models.make_inputs(name, "small", b, seed=11, multi_hot=1)
            args = [torch.from_numpy(x[k]).to(a.device) for k, _, _ in spec["inputs"]]
            with torch.no_grad():
                med, p10, p90, n = time_model(m, args, a.device, a.reps, a.min_seconds)
                rec = {"model": name, "batch": b, "device": a.device, "median_ms": med * 1e3, "p10_ms": p10 * 1e3,
                       "p90_ms": p90 * 1e3, "reps": n, "threads": torch.get_num_threads(), "torch": torch.__version__,
                       "what": "measured: PyTorch eager, small zoo variant, one-hot bags"}
                if a.device == "cuda":
                    rec["gpu"] = torch.cuda.get_device_name()
                    try:
                        gmed, g10, g90, _ = time_model(graph_replay(m, args), args, a.device, a.reps, a.min_seconds)
                        rec.update({"graph_median_ms": gmed * 1e3, "graph_p10_ms": g10 * 1e3, "graph_p90_ms": g90 * 1e3})
                    except RuntimeError as e:  # a model that cannot be captured keeps its eager number
                        rec["graph_error"] = str(e)[:200]
            records.append(rec)
            print(json.dumps(rec), flush=True)
            if a.out:  # written as we go: a run cut short keeps what it measured
                with open(a.out, "w") as f:
                    json.dump(records, f, indent=1)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(records, f, indent=1)


if __name__ == "__main__":
    main()
