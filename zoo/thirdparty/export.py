#!/usr/bin/env python3
"""Export third-party recommendation models to ONNX the way their users do,
with ONNX Runtime reference outputs, as CAGR import fixtures (issue 38).

  python3 zoo/thirdparty/export.py --dlrm-src /tmp/dlrm_src [--jobs 2] [--models deepfm,ebag_2d,...]

Families (see zoo/thirdparty/README.md):
  deepctr   DeepCTR-Torch (PyPI deepctr-torch) CTR models, one float input X [B, n_cols]
  dlrm      facebookresearch/dlrm DLRM_Net, imported at run time from --dlrm-src
  variants  hand-written TorchRec-style models (variants.py)

Every model goes through the TorchScript exporter (dynamo=False) at opset 13,
17 and 18 and the dynamo exporter (default opset), each with a dynamic batch
and with a fixed batch of 64 (DLRM also through its own --save-onnx call,
opset 11). Writes onnx/<id>.onnx, ref/<model>.b<B>.inputs.npz,
ref/<id>.b<B>.outputs.npz (ORT CPU outputs at batch 1, 64, 256 for dynamic
exports, 64 for fixed ones) and manifest.json. An exporter failure is kept
in the manifest (export_error), not raised. With --models, only those
models' entries are replaced.
"""
import argparse
import collections
import contextlib
import io
import json
import logging
import multiprocessing
import os
import re
import sys
import traceback
import types
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

from cases import Case, dense, od, zipf_ids  # noqa: E402

EXPORTS = [("ts", 13, "dynamic"), ("ts", 13, "fixed"), ("ts", 17, "dynamic"), ("ts", 17, "fixed"),
           ("ts", 18, "dynamic"), ("ts", 18, "fixed"), ("dynamo", None, "dynamic"), ("dynamo", None, "fixed")]
DLRM_OWN_EXPORT = ("ts", 11, "dynamic")  # dlrm_s_pytorch.py --save-onnx: opset 11, dynamic_axes
DYN_BATCHES = (1, 64, 256)
FIXED_BATCH = 64
EXAMPLE_BATCH = 7  # traced example for dynamic exports: a batch size baked into the graph shows at 1/64/256
TOL = 1e-5


def log(*a):
    print(*a, flush=True)


# --- DeepCTR-Torch -----------------------------------------------------------------------------

CTR_VOCABS = (40, 30, 25, 40, 12, 35)
CTR_DENSE = 3
CTR_DIM = 4
DNN = (16, 8)
SEQ_LEN = 5

# name -> (class, kwargs, feature set). Feature sets: plain = 6 sparse + 3 dense; sparse = the 6 sparse
# only (AFM and CCPM refuse DenseFeat); criteo26 = Criteo's 26 sparse (vocab <= 40) + 13 dense
# fields, so PNN builds its 325 pairwise products as it does on Criteo (FiBiNET's 650 would add 4 MB); varlen_* add
# VarLenSparseFeat columns; din = user/item/category + behaviour history with a length column.
DEEPCTR = collections.OrderedDict([
    ("deepfm", ("DeepFM", dict(dnn_hidden_units=DNN), "plain")),
    ("deepfm_varlen", ("DeepFM", dict(dnn_hidden_units=DNN), "varlen_mask")),
    ("xdeepfm", ("xDeepFM", dict(dnn_hidden_units=DNN, cin_layer_size=(8, 8)), "plain")),
    ("dcn", ("DCN", dict(dnn_hidden_units=DNN, cross_num=2, cross_parameterization="vector"), "plain")),
    ("dcn_matrix", ("DCN", dict(dnn_hidden_units=DNN, cross_num=2, cross_parameterization="matrix"), "plain")),
    ("dcnmix", ("DCNMix", dict(dnn_hidden_units=DNN, cross_num=2, low_rank=4, num_experts=2), "plain")),
    ("autoint", ("AutoInt", dict(dnn_hidden_units=DNN, att_layer_num=2, att_head_num=2), "plain")),
    ("autoint_varlen", ("AutoInt", dict(dnn_hidden_units=DNN, att_layer_num=2, att_head_num=2), "varlen_len")),
    ("wdl", ("WDL", dict(dnn_hidden_units=DNN), "plain")),
    ("wdl_varlen", ("WDL", dict(dnn_hidden_units=DNN), "varlen_len")),
    ("nfm", ("NFM", dict(dnn_hidden_units=DNN), "plain")),
    ("afm", ("AFM", dict(attention_factor=4), "sparse")),
    ("pnn", ("PNN", dict(dnn_hidden_units=DNN, use_inner=True, use_outter=True), "plain")),
    ("pnn_criteo26", ("PNN", dict(dnn_hidden_units=DNN, use_inner=True, use_outter=True), "criteo26")),
    ("fibinet", ("FiBiNET", dict(dnn_hidden_units=DNN, bilinear_type="interaction", reduction_ratio=3), "plain")),
    ("onn", ("ONN", dict(dnn_hidden_units=DNN), "plain")),
    ("ifm", ("IFM", dict(dnn_hidden_units=DNN), "plain")),
    ("difm", ("DIFM", dict(dnn_hidden_units=DNN, att_head_num=2), "plain")),
    ("ccpm", ("CCPM", dict(dnn_hidden_units=DNN, conv_kernel_width=(3, 2), conv_filters=(4, 4)), "sparse")),
    ("afn", ("AFN", dict(ltl_hidden_size=8, afn_dnn_hidden_units=DNN), "plain")),
    ("mlr", ("MLR", dict(region_num=3), "plain")),
    ("din", ("DIN", dict(dnn_hidden_units=DNN, att_hidden_size=(8, 4)), "din")),
    ("dien", ("DIEN", dict(dnn_hidden_units=DNN, att_hidden_units=(8, 4), gru_type="AUGRU"), "din")),
])


def _deepctr_columns(kind):
    from deepctr_torch.inputs import DenseFeat, SparseFeat, VarLenSparseFeat
    if kind == "din":
        cols = [SparseFeat("user", 30, embedding_dim=CTR_DIM), SparseFeat("gender", 3, embedding_dim=CTR_DIM),
                SparseFeat("item_id", 40, embedding_dim=CTR_DIM), SparseFeat("cate_id", 12, embedding_dim=CTR_DIM),
                DenseFeat("pay_score", 1)]
        cols += [VarLenSparseFeat(SparseFeat("hist_item_id", 40, embedding_dim=CTR_DIM, embedding_name="item_id"),
                                  maxlen=SEQ_LEN, length_name="seq_length"),
                 VarLenSparseFeat(SparseFeat("hist_cate_id", 12, embedding_dim=CTR_DIM, embedding_name="cate_id"),
                                  maxlen=SEQ_LEN, length_name="seq_length")]
        return cols
    if kind == "criteo26":
        return ([SparseFeat(f"C{i + 1}", min(r, 40), embedding_dim=CTR_DIM) for i, r in enumerate(KAGGLE_ROWS)] +
                [DenseFeat(f"I{i + 1}", 1) for i in range(13)])
    cols = [SparseFeat(f"C{i}", v, embedding_dim=CTR_DIM) for i, v in enumerate(CTR_VOCABS)]
    if kind == "sparse":
        return cols
    cols += [DenseFeat(f"I{i}", 1) for i in range(CTR_DENSE)]
    if kind == "varlen_mask":  # padding id 0 masked (length_name=None)
        cols += [VarLenSparseFeat(SparseFeat("tags_sum", 40, embedding_dim=CTR_DIM), SEQ_LEN, combiner="sum"),
                 VarLenSparseFeat(SparseFeat("tags_mean", 30, embedding_dim=CTR_DIM), SEQ_LEN, combiner="mean")]
    elif kind == "varlen_len":  # explicit length columns
        cols += [VarLenSparseFeat(SparseFeat("tags_mean", 40, embedding_dim=CTR_DIM), SEQ_LEN, combiner="mean",
                                  length_name="tags_mean_len"),
                 VarLenSparseFeat(SparseFeat("tags_sum", 30, embedding_dim=CTR_DIM), SEQ_LEN, combiner="sum",
                                  length_name="tags_sum_len"),
                 VarLenSparseFeat(SparseFeat("tags_max", 25, embedding_dim=CTR_DIM), SEQ_LEN, combiner="max")]
    return cols


def _deepctr_X(model, cols, batch, seed):
    """The concatenated float input DeepCTR's fit/predict build: one block of
    columns per entry of model.feature_index, in its order."""
    from deepctr_torch.inputs import DenseFeat, SparseFeat, VarLenSparseFeat
    rng = np.random.default_rng(seed)
    by_name = {c.name: c for c in cols}
    lengths = {}
    blocks = []
    for name, (s, e) in model.feature_index.items():
        c = by_name.get(name)
        if isinstance(c, SparseFeat):
            blocks.append(zipf_ids(rng, (batch, 1), c.vocabulary_size).astype(np.float32))
        elif isinstance(c, DenseFeat):
            blocks.append(dense(rng, batch, e - s))
        elif isinstance(c, VarLenSparseFeat):
            key = c.length_name or name
            if key not in lengths:
                lengths[key] = rng.integers(1, c.maxlen + 1, size=batch)
            ids = zipf_ids(rng, (batch, c.maxlen), c.vocabulary_size, low=1)
            ids[np.arange(c.maxlen)[None, :] >= lengths[key][:, None]] = 0
            blocks.append(ids.astype(np.float32))
        else:  # a length_name column
            if name not in lengths:
                lengths[name] = rng.integers(1, SEQ_LEN + 1, size=batch)
            blocks.append(lengths[name][:, None].astype(np.float32))
    return np.concatenate(blocks, axis=1).astype(np.float32)


def deepctr_case(name):
    import torch
    import deepctr_torch.models as dm
    cls_name, kw, kind = DEEPCTR[name]
    cols = _deepctr_columns(kind)
    cls = getattr(dm, cls_name)
    if cls_name == "PNN":
        model = cls(cols, **kw)
    elif cls_name == "MLR":
        model = cls(cols, **kw)
    elif cls_name in ("DIN", "DIEN"):
        model = cls(cols, ["item_id", "cate_id"], **kw)
    else:
        model = cls(cols, cols, **kw)
    torch.manual_seed(7)
    with torch.no_grad():  # DeepCTR initialises embeddings with std 1e-4; spread them so outputs vary
        for mod in model.modules():
            if isinstance(mod, (torch.nn.Embedding, torch.nn.EmbeddingBag)):
                mod.weight.normal_(0.0, 0.5)
    model.eval()

    def make(batch, seed):
        return od(("X", _deepctr_X(model, cols, batch, seed)))

    def to_args(d):
        return (torch.from_numpy(d["X"]),)

    def shapes():
        return ({0: torch.export.Dim("batch", min=1, max=4096)},)

    desc = f"deepctr_torch.models.{cls_name}({', '.join(f'{k}={v}' for k, v in kw.items())}), features: {kind}"
    return Case("deepctr", name, desc, model, make, to_args, ["X"], ["prob"],
                {"X": {0: "batch"}, "prob": {0: "batch"}}, shapes)


# --- facebookresearch/dlrm -------------------------------------------------------------------

KAGGLE_ROWS = [1460, 583, 10131227, 2202608, 305, 24, 12517, 633, 3, 93145, 5683, 8351593, 3194, 27, 14992,
               5461306, 10, 5652, 2173, 4, 7046547, 18, 15, 286181, 105, 142572]
TERABYTE_ROWS = [39884406, 39043, 17289, 7420, 20263, 3, 7120, 1543, 63, 38532951, 2953546, 403346, 10, 2208, 11938,
                 155, 4, 976, 14, 39979771, 25641295, 39664984, 585935, 12972, 108, 36]
MAX_ROWS = 50
# Kaggle: --arch-sparse-feature-size=16 --arch-mlp-bot=13-512-256-64-16 --arch-mlp-top=512-256-1
# Terabyte: --arch-sparse-feature-size=64 --arch-mlp-bot=13-512-256-64 --arch-mlp-top=512-512-256-1
# Same number of tables and layers, widths shrunk:
DLRM_ARCH = {"kaggle": (4, "13-16-8-4", "16-8-1", KAGGLE_ROWS), "terabyte": (8, "13-16-8", "16-16-8-1", TERABYTE_ROWS)}
# name -> (arch, interaction op, interaction itself, input form, max bag length)
DLRM = collections.OrderedDict([
    ("dlrm_kaggle_dot", ("kaggle", "dot", False, "list", 4)),
    ("dlrm_kaggle_dot_self", ("kaggle", "dot", True, "list", 4)),
    ("dlrm_kaggle_cat", ("kaggle", "cat", False, "list", 4)),
    ("dlrm_terabyte_dot", ("terabyte", "dot", False, "stacked", 3)),
    ("dlrm_terabyte_onehot_self", ("terabyte", "dot", True, "stacked", 1)),
])


def _load_dlrm_net(src):
    if not src or not os.path.exists(os.path.join(src, "dlrm_s_pytorch.py")):
        raise SystemExit("--dlrm-src DIR: DIR must hold facebookresearch/dlrm's dlrm_s_pytorch.py (see README.md)")
    try:  # the script imports SummaryWriter at module level; only training uses it
        import torch.utils.tensorboard  # noqa: F401
    except ImportError:
        stub = types.ModuleType("torch.utils.tensorboard")
        stub.SummaryWriter = object
        sys.modules["torch.utils.tensorboard"] = stub
    sys.path.insert(0, os.path.abspath(src))
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import dlrm_s_pytorch
    return dlrm_s_pytorch.DLRM_Net


def dlrm_case(name, src):
    import torch
    DLRM_Net = _load_dlrm_net(src)
    arch, op, itself, form, max_bag = DLRM[name]
    m_spa, bot, top, rows = DLRM_ARCH[arch]
    ln_emb = np.array([min(r, MAX_ROWS) for r in rows])
    ln_bot = np.fromstring(bot, dtype=int, sep="-")
    num_fea = ln_emb.size + 1
    m_den_out = ln_bot[-1]
    if op == "dot":
        num_int = (num_fea * (num_fea + 1)) // 2 + m_den_out if itself else (num_fea * (num_fea - 1)) // 2 + m_den_out
    else:
        num_int = num_fea * m_den_out
    ln_top = np.fromstring(str(num_int) + "-" + top, dtype=int, sep="-")
    np.random.seed(123)  # --numpy-rand-seed default; DLRM_Net initialises from np.random
    model = DLRM_Net(m_spa, ln_emb, ln_bot, ln_top, arch_interaction_op=op, arch_interaction_itself=itself,
                     sigmoid_bot=-1, sigmoid_top=ln_top.size - 2, ndevices=-1)
    model.eval()
    T = ln_emb.size

    if form == "list":  # RandomDataset + collate_wrapper_random_offset: offsets [T, B], indices a list
        names = ["dense_x", "offsets"] + [f"indices_{k}" for k in range(T)]

        def make(batch, seed):
            rng = np.random.default_rng(seed)
            d = od(("dense_x", dense(rng, batch, ln_bot[0])))
            offs, idx = [], []
            for r in ln_emb:
                lens = rng.integers(1, min(int(r), max_bag) + 1, size=batch)
                offs.append(np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64))
                idx.append(zipf_ids(rng, int(lens.sum()), int(r)))
            d["offsets"] = np.stack(offs)
            for k in range(T):
                d[f"indices_{k}"] = idx[k]
            return d

        def to_args(d):
            return (torch.from_numpy(d["dense_x"]), torch.from_numpy(d["offsets"]),
                    [torch.from_numpy(d[f"indices_{k}"]) for k in range(T)])

        axes = {"dense_x": {0: "batch_size"}, "pred": {0: "batch_size"}, "offsets": {1: "batch_size"}}
        axes.update({f"indices_{k}": {0: "batch_size"} for k in range(T)})

        def shapes():
            b = torch.export.Dim("batch", min=1, max=4096)
            return ({0: b}, {1: b}, [{0: torch.export.Dim(f"n{k}", min=1, max=1 << 20)} for k in range(T)])
        desc_in = "offsets [T, B] + indices_k [N_k] list (--save-onnx with random multi-hot data)"
    else:  # Criteo loaders: torch.stack(lS_o) [T, B], torch.stack(lS_i) [T, N]
        from variants import stacked_bags
        names = ["dense_x", "offsets", "indices"]

        def make(batch, seed):
            rng = np.random.default_rng(seed)
            x = dense(rng, batch, ln_bot[0])
            idx, off = stacked_bags(rng, [int(r) for r in ln_emb], batch, max_bag)
            return od(("dense_x", x), ("offsets", off), ("indices", idx))

        def to_args(d):
            return (torch.from_numpy(d["dense_x"]), torch.from_numpy(d["offsets"]), torch.from_numpy(d["indices"]))

        axes = {"dense_x": {0: "batch_size"}, "pred": {0: "batch_size"}, "offsets": {1: "batch_size"},
                "indices": {1: "batch_size"}}

        def shapes():
            b = torch.export.Dim("batch", min=1, max=4096)
            n = b if max_bag == 1 else torch.export.Dim("n", min=1, max=1 << 20)
            return ({0: b}, {1: b}, {1: n})
        desc_in = ("offsets [T, B] + indices [T, N] stacked" +
                   (" (one-hot, N = B, as the Criteo loaders feed it)" if max_bag == 1 else ", multi-hot"))
    desc = (f"DLRM_Net {arch}-like: {T} tables <= {MAX_ROWS} rows, dim {m_spa}, bot {bot}, top {num_int}-{top}, "
            f"{op} interaction, itself={itself}; {desc_in}")
    return Case("dlrm", name, desc, model, make, to_args, names, ["pred"], axes, shapes,
                extra_exports=[DLRM_OWN_EXPORT])


# --- export + reference ------------------------------------------------------------------------

def registry(dlrm_src):
    import variants
    reg = collections.OrderedDict()
    for n in DEEPCTR:
        reg[n] = (lambda n=n: deepctr_case(n))
    if dlrm_src:
        for n in DLRM:
            reg[n] = (lambda n=n: dlrm_case(n, dlrm_src))
    for n, b in variants.builders().items():
        reg[n] = b
    return reg


def fixture_id(model, exporter, opset, mode):
    ex = f"ts{opset}" if exporter == "ts" else "dynamo"
    return f"{model}.{ex}.{'dyn' if mode == 'dynamic' else 'b%d' % FIXED_BATCH}"


def _error_line(e):
    """The exporter's own message, one line: the innermost cause's first line,
    after the outer exception's type when they differ (dynamo wraps torch.export's)."""
    inner = e
    while inner.__cause__ is not None:
        inner = inner.__cause__

    def first(x):
        lines = [ln.strip() for ln in re.sub(r"\x1b\[[0-9;]*m", "", str(x)).splitlines() if ln.strip()]
        return lines[0] if lines else ""
    if inner is e:
        return f"{type(e).__name__}: {first(e)}"[:400]
    return f"{type(e).__name__} <- {type(inner).__name__}: {first(inner)}"[:400]


def export_model(case, exporter, opset, mode, path, example):
    import torch
    args = case.to_args(example)
    kw = dict(input_names=case.input_names, output_names=case.output_names)
    if exporter == "ts":
        kw.update(dynamo=False, opset_version=opset)
        if mode == "dynamic":
            kw["dynamic_axes"] = case.dynamic_axes
    else:
        kw.update(dynamo=True, external_data=False)
        if mode == "dynamic":
            kw["dynamic_shapes"] = case.dynamic_shapes()
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(case.module, args, path, **kw)
    if exporter == "dynamo":
        _strip_node_metadata(path)


def _strip_node_metadata(path):
    """The dynamo exporter records a Python stack trace per node (metadata_props,
    ~80% of a small file); the graph itself is left as exported."""
    import onnx
    m = onnx.load(path)

    def walk(g):
        for n in g.node:
            del n.metadata_props[:]
            for a in n.attribute:
                if a.HasField("g"):
                    walk(a.g)
                for sg in a.graphs:
                    walk(sg)
    walk(m.graph)
    for fn in m.functions:
        for n in fn.node:
            del n.metadata_props[:]
    onnx.save(m, path)


def _ort_session(path):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def _torch_out(case, inputs):
    import torch
    with torch.no_grad():
        y = case.module(*case.to_args(inputs))
    if isinstance(y, (tuple, list)):
        y = y[0]
    return y.detach().numpy()


def _save_npz(path, arrays):
    np.savez_compressed(path, **arrays)


def process(name, out_dir, dlrm_src):
    """All exports of one model; returns its manifest entries."""
    import torch
    torch.set_num_threads(1)
    torch.manual_seed(0)
    logging.getLogger("torch.onnx").setLevel(logging.ERROR)
    logging.getLogger("onnxscript").setLevel(logging.ERROR)
    import onnx
    case = registry(dlrm_src)[name]()
    onnx_dir, ref_dir = os.path.join(out_dir, "onnx"), os.path.join(out_dir, "ref")
    inputs = {b: case.make_inputs(b, 1000 + b) for b in DYN_BATCHES}
    torch_ref, torch_err = {}, {}
    for b in DYN_BATCHES:  # PyTorch itself may fail at a batch (DCNMix squeezes away a batch of 1)
        try:
            torch_ref[b] = _torch_out(case, inputs[b])
        except Exception as e:
            torch_err[b] = _error_line(e)
    for b in DYN_BATCHES:
        _save_npz(os.path.join(ref_dir, f"{name}.b{b}.inputs.npz"), inputs[b])
    entries = []
    for exporter, opset, mode in EXPORTS + case.extra_exports:
        fid = fixture_id(name, exporter, opset, mode)
        path = os.path.join(onnx_dir, fid + ".onnx")
        rel = os.path.relpath(path, out_dir)
        ent = collections.OrderedDict(id=fid, family=case.family, model=name, desc=case.desc, exporter=exporter,
                                      opset=opset, batch_mode=mode, onnx=None, bytes=None, inputs=None,
                                      outputs=None, refs={}, prob_output=case.prob_output or case.output_names[0],
                                      torch_vs_ort={}, export_error=None, ort_error=None, expected=None, reason=None)
        if (exporter, opset, mode) == DLRM_OWN_EXPORT and case.family == "dlrm":
            ent["note"] = "dlrm_s_pytorch.py --save-onnx's own torch.onnx.export call (opset 11, its names and axes)"
        batches = DYN_BATCHES if mode == "dynamic" else (FIXED_BATCH,)
        example = case.make_inputs(EXAMPLE_BATCH, EXAMPLE_BATCH) if mode == "dynamic" else inputs[FIXED_BATCH]
        if os.path.exists(path):
            os.remove(path)
        try:
            export_model(case, exporter, opset, mode, path, example)
        except Exception as e:  # the exporter's failure is a result, kept in the manifest
            ent["export_error"] = _error_line(e)
            ent["expected"] = "skip"
            ent["reason"] = "export failed in torch"
            if os.path.exists(path):
                os.remove(path)
            log(f"  {fid}: export failed: {ent['export_error'][:160]}")
            entries.append(ent)
            continue
        m = onnx.load(path)
        ent["opset"] = next(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))
        ent["requested_opset"] = opset
        ent["onnx"], ent["bytes"] = rel, os.path.getsize(path)

        def vinfo(v):
            dims = [d.dim_param if d.dim_param else d.dim_value for d in v.type.tensor_type.shape.dim]
            return {"name": v.name, "elem_type": onnx.TensorProto.DataType.Name(v.type.tensor_type.elem_type),
                    "shape": dims}
        inits = {i.name for i in m.graph.initializer}
        ent["inputs"] = [vinfo(v) for v in m.graph.input if v.name not in inits]
        ent["outputs"] = [vinfo(v) for v in m.graph.output]
        del m
        in_names = [v["name"] for v in ent["inputs"]]
        try:
            sess = _ort_session(path)
        except Exception as e:
            ent["ort_error"] = _error_line(e)
            ent["expected"], ent["reason"] = "skip", "ONNX Runtime cannot load the export"
            entries.append(ent)
            continue
        out_names = [o.name for o in sess.get_outputs()]
        for b in batches:
            if b in torch_err:  # no reference: the model does not run in PyTorch at this batch
                ent.setdefault("torch_error", {})[str(b)] = torch_err[b]
                continue
            feed_all = inputs[b]
            if all(n in feed_all for n in in_names):
                feed = {n: feed_all[n] for n in in_names}
            elif len(in_names) == len(feed_all):
                feed = dict(zip(in_names, feed_all.values()))
            else:
                ent["ort_error"] = f"cannot map ONNX inputs {in_names} to {list(feed_all)}"
                break
            if list(feed) == list(feed_all) and all(feed[k] is feed_all[k] for k in feed):
                in_rel = os.path.join("ref", f"{name}.b{b}.inputs.npz")
            else:  # the exporter pruned or renamed inputs: a file with exactly the graph's inputs
                in_rel = os.path.join("ref", f"{fid}.b{b}.inputs.npz")
                _save_npz(os.path.join(out_dir, in_rel), feed)
            try:
                outs = sess.run(None, feed)
            except Exception as e:  # kept per batch; the batches ORT runs still get references
                ent["ort_error"] = (ent["ort_error"] + "; " if ent["ort_error"] else "") + f"batch {b}: " + \
                    _error_line(e)
                continue
            out_rel = os.path.join("ref", f"{fid}.b{b}.outputs.npz")
            _save_npz(os.path.join(out_dir, out_rel), dict(zip(out_names, outs)))
            ent["refs"][str(b)] = {"inputs": in_rel, "outputs": out_rel}
            prob = outs[out_names.index(ent["prob_output"])] if ent["prob_output"] in out_names else outs[0]
            ref = torch_ref[b]
            diff = float(np.max(np.abs(prob.reshape(ref.shape) - ref))) if prob.size == ref.size else None
            ent["torch_vs_ort"][str(b)] = diff
        if not ent["refs"]:
            ent["expected"], ent["reason"] = "skip", "no reference outputs (ONNX Runtime or PyTorch fail)"
        if ent["ort_error"]:
            log(f"  {fid}: ORT: {ent['ort_error'][:160]}")
        else:
            worst = max((d for d in ent["torch_vs_ort"].values() if d is not None), default=None)
            log(f"  {fid}: ok opset {ent['opset']}, {ent['bytes']} B, torch vs ORT {worst}")
        entries.append(ent)
    share_model_weights(name, onnx_dir, [e for e in entries if e["onnx"]], out_dir)
    return entries


def share_model_weights(name, onnx_dir, entries, out_dir):
    """Stores the model's initializers over 1 KiB once, in onnx/<model>.weights
    (ONNX external data, identical tensors shared by all its exports), as
    zoo/share_weights.py does for the zoo; the graphs are unchanged. ONNX
    Runtime then reruns one batch of each export to confirm the references."""
    import onnx
    sys.path.insert(0, os.path.dirname(HERE))
    from share_weights import externalize
    location = f"{name}.weights"
    index = {}
    with open(os.path.join(onnx_dir, location), "wb") as blob:
        for e in entries:
            path = os.path.join(out_dir, e["onnx"])
            m = onnx.load(path)
            externalize(m, blob, index, location)
            onnx.save_model(m, path)
            e["bytes"] = os.path.getsize(path)
            if any(t.data_location == onnx.TensorProto.EXTERNAL for t in m.graph.initializer):
                e["weights"] = os.path.join("onnx", location)
    if not index:  # no initializer over 1 KiB: nothing to share
        os.remove(os.path.join(onnx_dir, location))
    for e in entries:
        if not e["refs"]:
            continue
        b, ref = next(iter(e["refs"].items()))
        feed = dict(np.load(os.path.join(out_dir, ref["inputs"])))
        want = np.load(os.path.join(out_dir, ref["outputs"]))
        got = _ort_session(os.path.join(out_dir, e["onnx"])).run(list(want.files), feed)
        for k, g in zip(want.files, got):
            if not np.array_equal(g, want[k]):
                raise RuntimeError(f"{e['id']}: output {k} changed after moving weights to {location}")


def _worker(job):
    name, out_dir, dlrm_src = job
    try:
        return name, process(name, out_dir, dlrm_src), None
    except Exception:
        return name, [], traceback.format_exc()


def versions():
    import importlib.metadata as md
    v = {}
    for p in ("torch", "onnx", "onnxruntime", "onnxscript", "deepctr-torch", "numpy"):
        try:
            v[p] = md.version(p)
        except md.PackageNotFoundError:
            v[p] = None
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dlrm-src", help="directory with facebookresearch/dlrm's dlrm_s_pytorch.py (and its modules)")
    ap.add_argument("--dlrm-commit", default=None, help="the dlrm commit checked out there (recorded in the manifest)")
    ap.add_argument("--out", default=HERE)
    ap.add_argument("--models", default="", help="comma-separated model names (default: all)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--list", action="store_true", help="list model names and exit")
    a = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    reg = registry(a.dlrm_src)
    if a.list:
        print("\n".join(reg))
        return 0
    if not a.dlrm_src:
        log("no --dlrm-src: skipping the dlrm family")
    names = [n for n in a.models.split(",") if n] or list(reg)
    unknown = [n for n in names if n not in reg]
    if unknown:
        raise SystemExit(f"unknown models {unknown}; --list shows them")
    os.makedirs(os.path.join(a.out, "onnx"), exist_ok=True)
    os.makedirs(os.path.join(a.out, "ref"), exist_ok=True)
    man_path = os.path.join(a.out, "manifest.json")
    old = json.load(open(man_path)) if os.path.exists(man_path) else {"fixtures": []}
    jobs = [(n, a.out, a.dlrm_src) for n in names]
    results = {}
    if a.jobs > 1:
        with multiprocessing.get_context("spawn").Pool(a.jobs, maxtasksperchild=1) as pool:
            for name, ents, err in pool.imap_unordered(_worker, jobs):
                log(f"{name}: {len(ents)} exports" + (f"\n{err}" if err else ""))
                results[name] = ents
    else:
        for j in jobs:
            name, ents, err = _worker(j)
            log(f"{name}: {len(ents)} exports" + (f"\n{err}" if err else ""))
            results[name] = ents
    keep_expect = {f["id"]: (f.get("expected"), f.get("reason")) for f in old.get("fixtures", [])}
    fixtures = [f for f in old.get("fixtures", []) if f["model"] not in results]
    for n in names:
        for e in results.get(n, []):
            if e["expected"] is None and e["id"] in keep_expect and keep_expect[e["id"]][0] in ("pass", "fail"):
                e["expected"], e["reason"] = keep_expect[e["id"]]
            fixtures.append(e)
    order = {n: i for i, n in enumerate(reg)}
    fixtures.sort(key=lambda f: (order.get(f["model"], 1 << 30), f["id"]))
    dlrm_commit = a.dlrm_commit or old.get("dlrm_commit")
    man = collections.OrderedDict(
        about="third-party ONNX fixtures for CAGR import (zoo/thirdparty/README.md); refs are ONNX Runtime CPU "
              "outputs; torch_vs_ort is max abs diff of the prob output against PyTorch eager",
        versions=versions(), dlrm_commit=dlrm_commit, tolerance=TOL, fixtures=fixtures)
    with open(man_path, "w") as f:
        json.dump(man, f, indent=1)
        f.write("\n")
    n_err = sum(1 for f in fixtures if f["export_error"])
    log(f"wrote {man_path}: {len(fixtures)} fixtures, {n_err} export errors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
