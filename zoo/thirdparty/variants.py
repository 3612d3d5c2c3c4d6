"""Hand-written TorchRec-style recommendation models: the same small tower
(bottom MLP on 3 dense features, 4 sparse fields, top MLP, sigmoid) with the
sparse fields embedded in every way people write it:

  ebag_1d_offsets   nn.EmbeddingBag(sum)(ids[N], offsets[B]) per field, lists of tensors, some empty bags
  ebag_2d           nn.EmbeddingBag(sum)(sparse[:, i:i+1]): 2-D ids, no offsets (implicit fixed bags)
  ebag_2d_multihot  nn.EmbeddingBag(mean)(sparse[:, i, :]): [B, F, 3] ids, fixed-length bags
  ebag_last_offset  include_last_offset=True, offsets[B+1]
  ebag_psw          per_sample_weights[N] (mode sum)
  ebag_padding_idx  padding_idx=0, mode mean (padding rows neither summed nor counted)
  ebag_mean         mode mean, 1-D ids + offsets
  ebag_max          mode max, 1-D ids + offsets
  f_embedding_bag   F.embedding_bag(ids, weight, offsets) on parameters the module owns
  emb_sum_pool      nn.Embedding on [B, F, L] ids, then .sum(dim=2)
  emb_mean_pool     nn.Embedding on [B, F, L] ids, then .mean(dim=2)
  mega_table        one concatenated table; ids [B, F] + per-field row offsets (a buffer)
  ids_list          ids passed as F separate [B] tensors, one nn.Embedding each
  ids_stacked       ids stacked [B, F], nn.Embedding(sparse[:, i]) per field
  dlrm_stack_tril   DLRM with torch.stack + bmm + tril_indices buffers, fed indices [T, N] / offsets [T, B]
  mha               nn.MultiheadAttention (2 heads, batch_first) over the field embeddings
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from cases import Case, bag_lengths, dense, equal_total_bags, od, offsets_of, zipf_ids

VOCABS = (40, 25, 50, 12)
NF = len(VOCABS)
DIM = 8
NDENSE = 3
MAX_BAG = 4


class Tower(nn.Module):
    """bottom MLP(dense) ++ field vectors -> top MLP -> sigmoid."""

    def __init__(self, n_vec):
        super().__init__()
        self.bot = nn.Sequential(nn.Linear(NDENSE, 16), nn.ReLU(), nn.Linear(16, DIM), nn.ReLU())
        self.top = nn.Sequential(nn.Linear(DIM * (n_vec + 1), 16), nn.ReLU(), nn.Linear(16, 1), nn.Sigmoid())

    def forward(self, x, vecs):
        return self.top(torch.cat([self.bot(x)] + list(vecs), dim=1))


def _t(a):
    return torch.from_numpy(np.ascontiguousarray(a))


def _dims():
    return torch.export.Dim("batch", min=1, max=4096)


# --- 1-D ids + offsets, lists of per-field tensors ---------------------------------------------

class EbagOffsets(nn.Module):
    def __init__(self, mode="sum", include_last_offset=False, padding_idx=None):
        super().__init__()
        self.embs = nn.ModuleList(nn.EmbeddingBag(v, DIM, mode=mode, include_last_offset=include_last_offset,
                                                  padding_idx=padding_idx) for v in VOCABS)
        self.tower = Tower(NF)

    def forward(self, dense_x, ids, offsets):
        return self.tower(dense_x, [e(i, o) for e, i, o in zip(self.embs, ids, offsets)])


class EbagPsw(EbagOffsets):
    def forward(self, dense_x, ids, offsets, weights):
        return self.tower(dense_x, [e(i, o, per_sample_weights=w)
                                    for e, i, o, w in zip(self.embs, ids, offsets, weights)])


class FEmbeddingBag(nn.Module):
    def __init__(self):
        super().__init__()
        self.weights = nn.ParameterList(nn.Parameter(torch.randn(v, DIM)) for v in VOCABS)
        self.tower = Tower(NF)

    def forward(self, dense_x, ids, offsets):
        return self.tower(dense_x, [F.embedding_bag(i, w, o, mode="sum")
                                    for w, i, o in zip(self.weights, ids, offsets)])


def _bag_case(model, desc, module, last=False, empty=False, low=0, psw=False, pad_frac=0.0):
    names = ["dense_x"] + [f"ids_{k}" for k in range(NF)] + [f"offsets_{k}" for k in range(NF)]
    if psw:
        names += [f"weights_{k}" for k in range(NF)]

    def make(batch, seed):
        rng = np.random.default_rng(seed)
        d = od(("dense_x", dense(rng, batch, NDENSE)))
        ids, offs, ws = [], [], []
        for v in VOCABS:
            lens = bag_lengths(rng, batch, MAX_BAG, min_len=0 if empty else 1)
            if empty and lens.sum() == 0:
                lens[0] = 1
            n = int(lens.sum())
            i = zipf_ids(rng, n, v, low=low)
            if pad_frac:
                i[rng.random(n) < pad_frac] = 0
            ids.append(i)
            offs.append(offsets_of(lens, include_last=last))
            ws.append(rng.random(n, dtype=np.float32) + 0.5)
        for k in range(NF):
            d[f"ids_{k}"] = ids[k]
        for k in range(NF):
            d[f"offsets_{k}"] = offs[k]
        if psw:
            for k in range(NF):
                d[f"weights_{k}"] = ws[k]
        return d

    def to_args(d):
        a = (_t(d["dense_x"]), [_t(d[f"ids_{k}"]) for k in range(NF)], [_t(d[f"offsets_{k}"]) for k in range(NF)])
        if psw:
            a += ([_t(d[f"weights_{k}"]) for k in range(NF)],)
        return a

    axes = {"dense_x": {0: "batch"}, "prob": {0: "batch"}}
    for k in range(NF):
        axes[f"ids_{k}"] = {0: f"n{k}"}
        axes[f"offsets_{k}"] = {0: "batch1" if last else "batch"}
        if psw:
            axes[f"weights_{k}"] = {0: f"n{k}"}

    def shapes():
        b = _dims()
        n = [torch.export.Dim(f"n{k}", min=1, max=1 << 20) for k in range(NF)]
        off = [{0: b + 1 if last else b} for _ in range(NF)]
        s = ({0: b}, [{0: n[k]} for k in range(NF)], off)
        if psw:
            s += ([{0: n[k]} for k in range(NF)],)
        return s

    return Case("variants", model, desc, module, make, to_args, names, ["prob"], axes, shapes)


# --- 2-D ids, fixed-length bags, nn.Embedding + pooling ----------------------------------------

class Ebag2d(nn.Module):
    def __init__(self, mode="sum", multihot=False):
        super().__init__()
        self.multihot = multihot
        self.embs = nn.ModuleList(nn.EmbeddingBag(v, DIM, mode=mode) for v in VOCABS)
        self.tower = Tower(NF)

    def forward(self, dense_x, sparse):
        if self.multihot:
            return self.tower(dense_x, [e(sparse[:, i, :]) for i, e in enumerate(self.embs)])
        return self.tower(dense_x, [e(sparse[:, i:i + 1]) for i, e in enumerate(self.embs)])


class EmbPool(nn.Module):
    def __init__(self, mean):
        super().__init__()
        self.mean = mean
        self.embs = nn.ModuleList(nn.Embedding(v, DIM) for v in VOCABS)
        self.tower = Tower(NF)

    def forward(self, dense_x, sparse):  # sparse [B, F, L]
        vecs = []
        for i, e in enumerate(self.embs):
            x = e(sparse[:, i, :])  # [B, L, D]
            vecs.append(x.mean(dim=1) if self.mean else x.sum(dim=1))
        return self.tower(dense_x, vecs)


class MegaTable(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(sum(VOCABS), DIM)
        self.register_buffer("field_offsets", torch.tensor(np.concatenate([[0], np.cumsum(VOCABS)[:-1]]), dtype=torch.long))
        self.tower = Tower(NF)

    def forward(self, dense_x, sparse):  # [B, F]
        e = self.emb(sparse + self.field_offsets)  # [B, F, D]
        return self.tower(dense_x, list(e.unbind(1)))


class IdsStacked(nn.Module):
    def __init__(self):
        super().__init__()
        self.embs = nn.ModuleList(nn.Embedding(v, DIM) for v in VOCABS)
        self.tower = Tower(NF)

    def forward(self, dense_x, sparse):
        return self.tower(dense_x, [e(sparse[:, i]) for i, e in enumerate(self.embs)])


class IdsList(IdsStacked):
    def forward(self, dense_x, *ids):
        return self.tower(dense_x, [e(i) for e, i in zip(self.embs, ids)])


class Mha(nn.Module):
    def __init__(self):
        super().__init__()
        self.embs = nn.ModuleList(nn.Embedding(v, DIM) for v in VOCABS)
        self.att = nn.MultiheadAttention(DIM, 2, batch_first=True)
        self.tower = Tower(NF)

    def forward(self, dense_x, sparse):
        e = torch.stack([emb(sparse[:, i]) for i, emb in enumerate(self.embs)], dim=1)  # [B, F, D]
        a, _ = self.att(e, e, e)
        return self.tower(dense_x, list((a + e).unbind(1)))


def _dense_ids(rng, batch, length=None, low=0):
    cols = [zipf_ids(rng, (batch,) if length is None else (batch, length), v, low=low) for v in VOCABS]
    return np.stack(cols, axis=1)


def _sparse_case(model, desc, module, length=None):
    names = ["dense_x", "sparse"]

    def make(batch, seed):
        rng = np.random.default_rng(seed)
        return od(("dense_x", dense(rng, batch, NDENSE)), ("sparse", _dense_ids(rng, batch, length)))

    def to_args(d):
        return (_t(d["dense_x"]), _t(d["sparse"]))

    axes = {"dense_x": {0: "batch"}, "sparse": {0: "batch"}, "prob": {0: "batch"}}

    def shapes():
        b = _dims()
        return ({0: b}, {0: b})

    return Case("variants", model, desc, module, make, to_args, names, ["prob"], axes, shapes)


def _ids_list_case():
    names = ["dense_x"] + [f"ids_{k}" for k in range(NF)]

    def make(batch, seed):
        rng = np.random.default_rng(seed)
        d = od(("dense_x", dense(rng, batch, NDENSE)))
        ids = _dense_ids(rng, batch)
        for k in range(NF):
            d[f"ids_{k}"] = np.ascontiguousarray(ids[:, k])
        return d

    def to_args(d):
        return (_t(d["dense_x"]),) + tuple(_t(d[f"ids_{k}"]) for k in range(NF))

    axes = {n: {0: "batch"} for n in names + ["prob"]}

    def shapes():
        b = _dims()
        return ({0: b}, tuple({0: b} for _ in range(NF)))  # *ids is one (tuple) argument to torch.export

    return Case("variants", "ids_list", "per-field [B] id tensors as separate inputs, nn.Embedding each",
                IdsList(), make, to_args, names, ["prob"], axes, shapes)


# --- DLRM written with torch.stack and tril_indices, fed [T, N] / [T, B] -----------------------

class DlrmStackTril(nn.Module):
    def __init__(self):
        super().__init__()
        self.embs = nn.ModuleList(nn.EmbeddingBag(v, DIM, mode="sum") for v in VOCABS)
        self.bot = nn.Sequential(nn.Linear(NDENSE, 16), nn.ReLU(), nn.Linear(16, DIM), nn.ReLU())
        li, lj = torch.tril_indices(NF + 1, NF + 1, offset=-1)
        self.register_buffer("li", li)
        self.register_buffer("lj", lj)
        n_int = (NF + 1) * NF // 2
        self.top = nn.Sequential(nn.Linear(DIM + n_int, 16), nn.ReLU(), nn.Linear(16, 1), nn.Sigmoid())

    def forward(self, dense_x, indices, offsets):
        x = self.bot(dense_x)
        ly = [self.embs[t](indices[t], offsets[t]) for t in range(NF)]
        t = torch.stack([x] + ly, dim=1)  # [B, F+1, D]
        z = torch.bmm(t, t.transpose(1, 2))
        return self.top(torch.cat([x, z[:, self.li, self.lj]], dim=1))


def stacked_bags(rng, vocabs, batch, max_len):
    lens = equal_total_bags(rng, len(vocabs), batch, max_len)
    idx = np.stack([zipf_ids(rng, int(l.sum()), v) for l, v in zip(lens, vocabs)])
    off = np.stack([offsets_of(l) for l in lens])
    return idx, off


def _dlrm_stack_case():
    names = ["dense_x", "indices", "offsets"]

    def make(batch, seed):
        rng = np.random.default_rng(seed)
        x = dense(rng, batch, NDENSE)
        idx, off = stacked_bags(rng, VOCABS, batch, MAX_BAG)
        return od(("dense_x", x), ("indices", idx), ("offsets", off))

    def to_args(d):
        return (_t(d["dense_x"]), _t(d["indices"]), _t(d["offsets"]))

    axes = {"dense_x": {0: "batch"}, "indices": {1: "n"}, "offsets": {1: "batch"}, "prob": {0: "batch"}}

    def shapes():
        b = _dims()
        return ({0: b}, {1: torch.export.Dim("n", min=1, max=1 << 20)}, {1: b})

    return Case("variants", "dlrm_stack_tril", "DLRM with torch.stack, bmm and tril_indices buffers; "
                "indices [T, N], offsets [T, B], multi-hot", DlrmStackTril(), make, to_args, names, ["prob"],
                axes, shapes)


def builders():
    """name -> zero-argument builder of the Case (built inside the worker)."""
    b = {
        "ebag_1d_offsets": lambda: _bag_case("ebag_1d_offsets", "EmbeddingBag(sum)(ids[N], offsets[B]) per field, "
                                             "list inputs, some empty bags", EbagOffsets(), empty=True),
        "ebag_2d": lambda: _sparse_case("ebag_2d", "EmbeddingBag(sum)(sparse[:, i:i+1]): 2-D ids, no offsets",
                                        Ebag2d()),
        "ebag_2d_multihot": lambda: _sparse_case("ebag_2d_multihot", "EmbeddingBag(mean)(sparse[:, i, :]) on "
                                                 "[B, F, 3] ids", Ebag2d("mean", multihot=True), length=3),
        "ebag_last_offset": lambda: _bag_case("ebag_last_offset", "EmbeddingBag(sum, include_last_offset=True), "
                                              "offsets[B+1]", EbagOffsets(include_last_offset=True), last=True),
        "ebag_psw": lambda: _bag_case("ebag_psw", "EmbeddingBag(sum) with per_sample_weights[N]", EbagPsw(),
                                      psw=True),
        "ebag_padding_idx": lambda: _bag_case("ebag_padding_idx", "EmbeddingBag(mean, padding_idx=0), ~20% "
                                              "padding ids", EbagOffsets("mean", padding_idx=0), pad_frac=0.2),
        "ebag_mean": lambda: _bag_case("ebag_mean", "EmbeddingBag(mean)(ids[N], offsets[B])", EbagOffsets("mean")),
        "ebag_max": lambda: _bag_case("ebag_max", "EmbeddingBag(max)(ids[N], offsets[B])", EbagOffsets("max")),
        "f_embedding_bag": lambda: _bag_case("f_embedding_bag", "F.embedding_bag(ids, weight, offsets, "
                                             "mode='sum')", FEmbeddingBag()),
        "emb_sum_pool": lambda: _sparse_case("emb_sum_pool", "nn.Embedding on [B, F, 3] ids, .sum(dim=1)",
                                             EmbPool(False), length=3),
        "emb_mean_pool": lambda: _sparse_case("emb_mean_pool", "nn.Embedding on [B, F, 3] ids, .mean(dim=1)",
                                              EmbPool(True), length=3),
        "mega_table": lambda: _sparse_case("mega_table", "one concatenated nn.Embedding, ids [B, F] + per-field "
                                           "row offsets buffer", MegaTable()),
        "ids_list": _ids_list_case,
        "ids_stacked": lambda: _sparse_case("ids_stacked", "ids stacked [B, F], nn.Embedding(sparse[:, i]) per "
                                            "field", IdsStacked()),
        "dlrm_stack_tril": _dlrm_stack_case,
        "mha": lambda: _sparse_case("mha", "nn.MultiheadAttention(8, 2 heads, batch_first) over field "
                                    "embeddings + residual", Mha()),
    }
    return b
