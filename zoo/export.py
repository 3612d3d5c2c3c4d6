#!/usr/bin/env python3
"""Export the CAGR zoo models to ONNX through both PyTorch exporters and write
reference inputs/outputs.

  python3 zoo/export.py --size small --out zoo/onnx [--models a,b] [--ref zoo/ref]
  python3 zoo/export.py --size full  [--models deepfm]          (-> zoo/full/)

Per model:
  <out>/<model>.ts.onnx       torch.onnx.export(dynamo=False, opset 17, dynamic_axes)
  <out>/<model>.dynamo.onnx   torch.onnx.export(dynamo=True, dynamic_shapes with Dim),
                              weights inline unless the model is > ~2GB
  <ref>/<model>.b4.inputs.npz, <model>.b7.inputs.npz   (keyed by ONNX input names)
  <ref>/<model>.<ts|dynamo>.b{4,7}.outputs.npz          (ORT outputs, keyed by ONNX output names)
ORT outputs are checked against PyTorch (max abs err <= 1e-5) and the script
fails loudly otherwise. Also writes <out>/external/dlrm_criteo.ts.onnx (+ .data)
for the small size, and a manifest (zoo/manifest.json for small,
<out>/manifest.json otherwise).
"""
import argparse
import collections
import contextlib
import io
import logging
import json
import os
import sys
import time
import traceback
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import models  # noqa: E402

TOL = 1e-5
REF_SETS = [  # (tag, batch, seed, multi_hot for DLRM bags)
    ("b4", 4, 4, 1),
    ("b7", 7, 7, 3),
]
EXPORT_EXAMPLE = (5, 123, 2)  # batch, seed, multi_hot used as example inputs for tracing
TWO_GB = 2 * 1024 ** 3 - 64 * 1024 ** 2
DYN_NAMES = {"B": "B", "L": "L"}


logging.getLogger("torch.onnx").setLevel(logging.ERROR)
logging.getLogger("onnxscript").setLevel(logging.ERROR)


def log(*a):
    print(*a, flush=True)


def torch_inputs(spec, np_inputs):
    return tuple(torch.from_numpy(np_inputs[n]) for n, _, _ in spec["inputs"])


def dynamic_axes_of(spec):
    d = {}
    for n, _, shape in spec["inputs"]:
        dyn = {i: s for i, s in enumerate(shape) if isinstance(s, str)}
        if dyn:
            d[n] = dyn
    d[models.OUTPUT_NAME] = {0: "B"}
    return d


def dynamic_shapes_of(spec):
    dims = {"B": torch.export.Dim("B", min=1, max=1 << 20), "L": torch.export.Dim("L", min=1, max=1 << 28)}
    return {n: {i: dims[s] for i, s in enumerate(shape) if isinstance(s, str)}
            for n, _, shape in spec["inputs"]}


def param_bytes(m):
    return sum(t.numel() * t.element_size() for t in list(m.parameters()) + list(m.buffers()))


@contextlib.contextmanager
def quiet_fd2():
    """Silence C++-level stderr (the TS exporter dumps whole graphs on errors)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved + [devnull]:
            os.close(fd)


def export_ts(m, spec, example, path):
    names = [n for n, _, _ in spec["inputs"]]
    # NGCF: the first propagation layer depends only on parameters, so TS constant
    # folding would bake E0[src]*w ([E,64] floats, ~9 MB) into the file; keep it live.
    fold = not isinstance(m, models.NGCF)
    buf = io.StringIO()
    with warnings.catch_warnings(), quiet_fd2(), contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        warnings.simplefilter("ignore")
        torch.onnx.export(m, example, path, dynamo=False, opset_version=17,
                          input_names=names, output_names=[models.OUTPUT_NAME],
                          dynamic_axes=dynamic_axes_of(spec), do_constant_folding=fold)


def export_ts_with_fallback(m, spec, example, path):
    """TorchScript export; NGCF's index_add is rejected by the TS exporter
    ("index_add_() with duplicated values in 'index' ... not supported"), so fall
    back to scatter_add (-> ScatterElements(reduction=add)). index_put_(accumulate=True)
    is NOT used: the TS exporter turns it into a plain ScatterND + Add, which is
    numerically wrong with duplicate indices. Returns a note or None."""
    if not isinstance(m, models.NGCF):
        export_ts(m, spec, example, path)
        return None
    try:
        export_ts(m, spec, example, path)
        return None
    except Exception as e:  # noqa: BLE001
        first = str(e).splitlines()[0][:160]
    old = m.agg
    try:
        m.agg = "scatter_add"
        export_ts(m, spec, example, path)
    finally:
        m.agg = old
    return f"TS exporter failed on index_add ({first}); exported with agg=scatter_add"


def export_dynamo(m, spec, example, path, external):
    names = [n for n, _, _ in spec["inputs"]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            prog = torch.onnx.export(m, example, dynamo=True, verbose=False,
                                     input_names=names, output_names=[models.OUTPUT_NAME],
                                     dynamic_shapes=dynamic_shapes_of(spec), external_data=external)
    prog.save(path, external_data=external)


def ort_session(path):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def count_ops(model):
    """op_type counts: main graph, nested subgraphs (keyed by 'Loop.body' etc.), functions."""
    main = collections.Counter(n.op_type for n in model.graph.node)
    sub = collections.defaultdict(collections.Counter)

    def walk(g, prefix):
        for n in g.node:
            for a in n.attribute:
                gs = [a.g] if a.type == onnx.AttributeProto.GRAPH else (
                    list(a.graphs) if a.type == onnx.AttributeProto.GRAPHS else [])
                for sg in gs:
                    key = f"{prefix}{n.op_type}.{a.name}"
                    sub[key].update(x.op_type for x in sg.node)
                    walk(sg, key + "/")

    walk(model.graph, "")
    funcs = {f"{f.domain}::{f.name}": dict(collections.Counter(n.op_type for n in f.node))
             for f in model.functions}
    return dict(sorted(main.items())), {k: dict(sorted(v.items())) for k, v in sub.items()}, funcs


def io_desc(vis, spec_shapes=None):
    out = []
    for vi in vis:
        tt = vi.type.tensor_type
        shape = [d.dim_param if d.dim_param else (d.dim_value if d.HasField("dim_value") else "?")
                 for d in tt.shape.dim]
        out.append({"name": vi.name, "dtype": onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type).name,
                    "onnx_shape": shape})
    return out


def symbolic_shape(onnx_shape, spec_shape):
    if spec_shape is None:
        return [s if isinstance(s, int) else "B" for s in onnx_shape]
    return spec_shape


def verify(path, m, spec, ref_inputs, tag_exporter, ref_dir, model_name, write):
    sess = ort_session(path)
    in_names = [i.name for i in sess.get_inputs()]
    out_names = [o.name for o in sess.get_outputs()]
    ref_files = {}
    worst = 0.0
    for tag, x in ref_inputs.items():
        feeds = {n: x[n] for n in in_names}
        ys = sess.run(out_names, feeds)
        with torch.no_grad():
            yt = m(*torch_inputs(spec, x)).numpy()
        err = float(np.max(np.abs(ys[0].astype(np.float64) - yt.astype(np.float64))))
        if ys[0].shape != yt.shape or not err <= TOL:
            raise RuntimeError(f"MISMATCH {model_name} {tag_exporter} {tag}: shape ort {ys[0].shape} "
                               f"torch {yt.shape}, max abs err {err}")
        worst = max(worst, err)
        if write:
            f = os.path.join(ref_dir, f"{model_name}.{tag_exporter}.{tag}.outputs.npz")
            np.savez(f, **dict(zip(out_names, ys)))
            ref_files[tag] = f
    return in_names, out_names, worst, ref_files


def onnx_info(path):
    mp = onnx.load(path, load_external_data=False)
    opset = {o.domain or "ai.onnx": o.version for o in mp.opset_import}
    return mp, opset


def rel(p):
    return os.path.relpath(p, os.path.dirname(HERE))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", choices=["small", "full"], default="small")
    ap.add_argument("--out", default=None)
    ap.add_argument("--ref", default=None)
    ap.add_argument("--models", default=",".join(models.MODELS))
    ap.add_argument("--exporters", default="ts,dynamo")
    ap.add_argument("--ops-json", default=None, help="op counts (default zoo/ops.json for --size small)")
    a = ap.parse_args()
    out = a.out or (os.path.join(HERE, "onnx") if a.size == "small" else os.path.join(HERE, "full"))
    ref = a.ref or (os.path.join(HERE, "ref") if a.size == "small" else os.path.join(out, "ref"))
    os.makedirs(out, exist_ok=True)
    os.makedirs(ref, exist_ok=True)
    names = [n for n in a.models.split(",") if n]
    exporters = a.exporters.split(",")
    manifest_path = os.path.join(HERE, "manifest.json") if a.size == "small" else os.path.join(out, "manifest.json")
    manifest = []
    if os.path.exists(manifest_path):
        try:
            manifest = [e for e in json.load(open(manifest_path))
                        if not (e["model"] in names and e["exporter"] in exporters)]
        except Exception:
            manifest = []
    ops_all = {}
    failures = []

    for name in names:
        t0 = time.time()
        m, spec = models.build(name, a.size)
        nbytes = param_bytes(m)
        large = nbytes > TWO_GB
        log(f"== {name} ({a.size}) params+buffers {nbytes / 2**20:.1f} MiB{' (external data)' if large else ''}")
        ex = models.make_inputs(name, a.size, EXPORT_EXAMPLE[0], EXPORT_EXAMPLE[1], EXPORT_EXAMPLE[2])
        example = torch_inputs(spec, ex)
        ref_inputs = {}
        for tag, b, seed, mh in REF_SETS:
            x = models.make_inputs(name, a.size, b, seed, mh)
            ref_inputs[tag] = x
            np.savez(os.path.join(ref, f"{name}.{tag}.inputs.npz"), **x)
        for exp in exporters:
            path = os.path.join(out, f"{name}.{exp}.onnx")
            try:
                te = time.time()
                note = None
                if exp == "ts" and large:
                    # the TS exporter writes one file per tensor next to the model when
                    # >2GB; export into a scratch dir and re-save as <model>.ts.onnx.data
                    import shutil
                    import tempfile
                    tmp = tempfile.mkdtemp(dir=out)
                    try:
                        note = export_ts_with_fallback(m, spec, example, os.path.join(tmp, os.path.basename(path)))
                        mp_big = onnx.load(os.path.join(tmp, os.path.basename(path)))
                        onnx.save_model(mp_big, path, save_as_external_data=True, all_tensors_to_one_file=True,
                                        location=os.path.basename(path) + ".data", size_threshold=1024)
                        del mp_big
                    finally:
                        shutil.rmtree(tmp, ignore_errors=True)
                elif exp == "ts":
                    note = export_ts_with_fallback(m, spec, example, path)
                    if note:
                        log(f"  ts: NOTE {note}")
                else:
                    export_dynamo(m, spec, example, path, external=large)
                t_exp = time.time() - te
                in_names, out_names, worst, ref_files = verify(path, m, spec, ref_inputs, exp, ref, name, True)
                mp, opset = onnx_info(path)
                spec_in = {n: sh for n, _, sh in spec["inputs"]}
                ins = io_desc(mp.graph.input)
                for i in ins:
                    i["shape"] = symbolic_shape(i["onnx_shape"], spec_in.get(i["name"]))
                outs = io_desc(mp.graph.output)
                for o in outs:
                    o["shape"] = symbolic_shape(o["onnx_shape"], None)
                main_ops, sub_ops, funcs = count_ops(mp)
                ops_all[f"{name}.{exp}"] = {"main": main_ops, "subgraphs": sub_ops, "functions": funcs}
                ext = [f for f in os.listdir(out) if f.startswith(f"{name}.{exp}.onnx") and f != f"{name}.{exp}.onnx"]
                manifest.append({
                    "model": name, "size": a.size, "exporter": exp, "onnx": rel(path),
                    "external_data": [rel(os.path.join(out, f)) for f in ext],
                    "opset": opset, "ir_version": mp.ir_version,
                    "inputs": ins, "outputs": outs,
                    "ref_inputs": {t: rel(os.path.join(ref, f"{name}.{t}.inputs.npz")) for t in ref_inputs},
                    "ref_outputs": {t: rel(f) for t, f in ref_files.items()},
                    "max_abs_err_vs_torch": worst,
                    **({"note": note} if note else {}),
                })
                log(f"  {exp}: ok export {t_exp:.1f}s, {os.path.getsize(path) / 2**20:.2f} MiB, "
                    f"inputs {in_names} outputs {out_names}, opset {opset}, max err {worst:.2e}")
                log(f"    ops: {main_ops}")
                for k, v in sub_ops.items():
                    log(f"    subgraph {k}: {v}")
                for k, v in funcs.items():
                    log(f"    function {k}: {v}")
            except Exception as e:  # noqa: BLE001
                failures.append((name, exp, repr(e)))
                log(f"  {exp}: FAILED {e!r}")
                traceback.print_exc()
        log(f"  ({time.time() - t0:.1f}s)")

        if name == "dlrm_criteo" and a.size == "small" and "ts" in exporters:
            try:
                ext_dir = os.path.join(out, "external")
                os.makedirs(ext_dir, exist_ok=True)
                mp = onnx.load(os.path.join(out, "dlrm_criteo.ts.onnx"))
                p = os.path.join(ext_dir, "dlrm_criteo.ts.onnx")
                loc = "dlrm_criteo.ts.onnx.data"
                if os.path.exists(os.path.join(ext_dir, loc)):
                    os.remove(os.path.join(ext_dir, loc))
                onnx.save_model(mp, p, save_as_external_data=True, all_tensors_to_one_file=True,
                                location=loc, size_threshold=1024)
                _, _, worst, _ = verify(p, m, spec, ref_inputs, "ts", ref, name, False)
                log(f"  external-data copy: {rel(p)} + {loc} "
                    f"({os.path.getsize(p) / 1024:.0f} KiB + {os.path.getsize(os.path.join(ext_dir, loc)) / 2**20:.2f} MiB), "
                    f"ORT ok, max err {worst:.2e}")
                mp2, opset = onnx_info(p)
                manifest.append({
                    "model": name, "size": a.size, "exporter": "ts", "variant": "external_data",
                    "onnx": rel(p), "external_data": [rel(os.path.join(ext_dir, loc))], "opset": opset,
                    "ir_version": mp2.ir_version,
                    "inputs": [e for e in manifest if e["model"] == name and e["exporter"] == "ts"][-1]["inputs"],
                    "outputs": [e for e in manifest if e["model"] == name and e["exporter"] == "ts"][-1]["outputs"],
                    "ref_inputs": {t: rel(os.path.join(ref, f"{name}.{t}.inputs.npz")) for t in ref_inputs},
                    "ref_outputs": {t: rel(os.path.join(ref, f"{name}.ts.{t}.outputs.npz")) for t in ref_inputs},
                    "max_abs_err_vs_torch": worst,
                })
            except Exception as e:  # noqa: BLE001
                failures.append((name, "ts-external", repr(e)))
                log(f"  external-data copy FAILED {e!r}")
                traceback.print_exc()
        del m

    order = {n: i for i, n in enumerate(models.MODELS)}
    manifest.sort(key=lambda e: (order.get(e["model"], 99), e["exporter"], e.get("variant", "")))
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1)
    ops_json = a.ops_json or (os.path.join(HERE, "ops.json") if a.size == "small" else None)
    if ops_json:
        if os.path.exists(ops_json):
            ops_all = {**{k: v for k, v in json.load(open(ops_json)).items() if k not in ops_all}, **ops_all}
        with open(ops_json, "w") as f:
            json.dump(ops_all, f, indent=1)
    log(f"manifest: {rel(manifest_path)} ({len(manifest)} entries)")
    if failures:
        log("FAILURES:")
        for fl in failures:
            log("  ", *fl)
        sys.exit(1)


if __name__ == "__main__":
    main()
