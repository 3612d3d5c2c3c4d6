"""PyTorch reference models for the CAGR zoo.

Every model has a 'full' and a 'small' config; 'small' caps every embedding
table (and NGCF's user/item counts) at 1000 rows, everything else identical.
Use build(name, size) -> (module in eval mode, spec dict).
"""
import math
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data"))
import gen  # noqa: E402  (data/gen.py: cardinalities + input generators)

SMALL_ROWS = 1000
EMB_INIT = 0.05


def _emb_init_(w, a=EMB_INIT):
    with torch.no_grad():
        w.uniform_(-a, a)


def mlp(sizes, last_act=True):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2 or last_act:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


# --------------------------------------------------------------------------- DLRM
class DLRM(nn.Module):
    """facebookresearch/dlrm style (dot interaction, no self-interaction)."""

    def __init__(self, cards, dim, bot, top):
        super().__init__()
        self.dim = dim
        self.emb_l = nn.ModuleList([nn.EmbeddingBag(n, dim, mode="sum") for n in cards])
        for e in self.emb_l:
            _emb_init_(e.weight)
        self.bot_l = mlp(bot, last_act=True)
        ni = len(cards) + 1
        num_int = dim + ni * (ni - 1) // 2
        self.top_l = mlp([num_int] + list(top), last_act=False)
        self.li = [i for i in range(ni) for j in range(i)]
        self.lj = [j for i in range(ni) for j in range(i)]

    def interact(self, x, ly):
        B, d = x.shape
        T = torch.cat([x] + ly, dim=1).view((B, -1, d))
        Z = torch.bmm(T, torch.transpose(T, 1, 2))
        Zflat = Z[:, self.li, self.lj]
        return torch.cat([x, Zflat], dim=1)

    def forward(self, dense, sparse_indices, sparse_offsets):
        x = self.bot_l(dense)
        ly = [emb(sparse_indices[t], sparse_offsets[t]) for t, emb in enumerate(self.emb_l)]
        R = self.interact(x, ly)
        return torch.sigmoid(self.top_l(R))


# --------------------------------------------------------------------------- common bits
class FieldEmb(nn.Module):
    """One nn.Embedding per field, stacked to [B, F, D]."""

    def __init__(self, cards, dim):
        super().__init__()
        self.embs = nn.ModuleList([nn.Embedding(n, dim) for n in cards])
        for e in self.embs:
            _emb_init_(e.weight)

    def forward(self, sparse):
        return torch.stack([e(sparse[:, f]) for f, e in enumerate(self.embs)], dim=1)


class LinearTerm(nn.Module):
    """First-order term: per-field dim-1 embeddings summed (+ optional dense linear) + bias."""

    def __init__(self, cards, num_dense=0):
        super().__init__()
        self.embs = nn.ModuleList([nn.Embedding(n, 1) for n in cards])
        for e in self.embs:
            _emb_init_(e.weight)
        self.dense = nn.Linear(num_dense, 1, bias=False) if num_dense else None
        self.bias = nn.Parameter(torch.zeros(1))

    def forward(self, sparse, dense=None):
        w = torch.cat([e(sparse[:, f]) for f, e in enumerate(self.embs)], dim=1)  # [B,F]
        out = torch.sum(w, dim=1, keepdim=True) + self.bias
        if self.dense is not None:
            out = out + self.dense(dense)
        return out


# --------------------------------------------------------------------------- DeepFM
class DeepFM(nn.Module):
    def __init__(self, cards, dim=16, dnn=(400, 400, 400)):
        super().__init__()
        self.emb = FieldEmb(cards, dim)
        self.linear = LinearTerm(cards)
        self.dnn = mlp([len(cards) * dim] + list(dnn), last_act=True)
        self.dnn_out = nn.Linear(dnn[-1], 1, bias=False)

    def forward(self, sparse):
        e = self.emb(sparse)  # [B,F,D]
        square_of_sum = torch.sum(e, dim=1, keepdim=True) ** 2
        sum_of_square = torch.sum(e * e, dim=1, keepdim=True)
        fm = 0.5 * torch.sum(square_of_sum - sum_of_square, dim=2, keepdim=False)  # [B,1]
        dnn = self.dnn_out(self.dnn(torch.flatten(e, start_dim=1)))
        return torch.sigmoid(self.linear(sparse) + fm + dnn)


# --------------------------------------------------------------------------- xDeepFM
class CIN(nn.Module):
    """deepctr-torch CIN, split_half=False."""

    def __init__(self, field_size, layer_size=(200, 200, 200)):
        super().__init__()
        self.layer_size = layer_size
        self.field_nums = [field_size]
        self.conv1ds = nn.ModuleList()
        for size in layer_size:
            self.conv1ds.append(nn.Conv1d(self.field_nums[-1] * self.field_nums[0], size, 1))
            self.field_nums.append(size)

    def forward(self, inputs):
        batch_size = inputs.shape[0]
        dim = inputs.shape[-1]
        hidden_nn_layers = [inputs]
        final_result = []
        for i, size in enumerate(self.layer_size):
            x = torch.einsum('bhd,bmd->bhmd', hidden_nn_layers[-1], hidden_nn_layers[0])
            x = x.reshape(batch_size, hidden_nn_layers[-1].shape[1] * hidden_nn_layers[0].shape[1], dim)
            x = self.conv1ds[i](x)
            curr_out = F.relu(x)
            final_result.append(curr_out)
            hidden_nn_layers.append(curr_out)
        result = torch.cat(final_result, dim=1)
        return torch.sum(result, -1)  # [B, sum(layer_size)]


class XDeepFM(nn.Module):
    def __init__(self, cards, dim=16, cin=(200, 200, 200), dnn=(400, 400)):
        super().__init__()
        self.emb = FieldEmb(cards, dim)
        self.linear = LinearTerm(cards)
        self.cin = CIN(len(cards), cin)
        self.cin_linear = nn.Linear(sum(cin), 1, bias=False)
        self.dnn = mlp([len(cards) * dim] + list(dnn), last_act=True)
        self.dnn_out = nn.Linear(dnn[-1], 1, bias=False)

    def forward(self, sparse):
        e = self.emb(sparse)
        logit = self.linear(sparse)
        logit = logit + self.cin_linear(self.cin(e))
        logit = logit + self.dnn_out(self.dnn(torch.flatten(e, start_dim=1)))
        return torch.sigmoid(logit)


# --------------------------------------------------------------------------- DCN-v2
class DCNv2(nn.Module):
    def __init__(self, cards, num_dense=13, dim=16, n_cross=3, dnn=(400, 400)):
        super().__init__()
        self.emb = FieldEmb(cards, dim)
        d0 = num_dense + len(cards) * dim
        self.cross = nn.ModuleList([nn.Linear(d0, d0) for _ in range(n_cross)])
        for c in self.cross:  # keep the cross tower well scaled
            with torch.no_grad():
                c.weight.mul_(0.5)
        self.dnn = mlp([d0] + list(dnn), last_act=True)
        self.out = nn.Linear(d0 + dnn[-1], 1)

    def forward(self, dense, sparse):
        e = self.emb(sparse)
        x0 = torch.cat([dense, torch.flatten(e, start_dim=1)], dim=1)
        xl = x0
        for c in self.cross:
            xl = x0 * c(xl) + xl
        h = self.dnn(x0)
        return torch.sigmoid(self.out(torch.cat([xl, h], dim=1)))


# --------------------------------------------------------------------------- Wide & Deep
class WideDeep(nn.Module):
    def __init__(self, cards, num_dense=13, dim=16, dnn=(400, 400)):
        super().__init__()
        self.wide = LinearTerm(cards, num_dense)
        self.emb = FieldEmb(cards, dim)
        self.deep = mlp([len(cards) * dim + num_dense] + list(dnn) + [1], last_act=False)

    def forward(self, dense, sparse):
        wide = self.wide(sparse, dense)
        e = torch.flatten(self.emb(sparse), start_dim=1)
        deep = self.deep(torch.cat([e, dense], dim=1))
        return torch.sigmoid(wide + deep)


# --------------------------------------------------------------------------- NGCF
def ngcf_graph(n_users, n_items, n_inter, seed=1234):
    """Random bipartite graph with Zipf-ish degrees; symmetric-normalised edge list.

    Returns src, dst (i64 [E]) and w (f32 [E]) over n_users+n_items nodes (items
    offset by n_users), both directions, w = 1/sqrt(deg(src) deg(dst)).
    """
    rng = np.random.default_rng(seed)
    pu = 1.0 / np.arange(1, n_users + 1) ** 0.8
    pi = 1.0 / np.arange(1, n_items + 1) ** 0.8
    u = rng.choice(n_users, size=int(n_inter * 1.1), p=pu / pu.sum())
    i = rng.choice(n_items, size=int(n_inter * 1.1), p=pi / pi.sum())
    u = rng.permutation(n_users)[u]
    i = rng.permutation(n_items)[i]
    pairs = np.unique(u.astype(np.int64) * n_items + i)[:n_inter]
    pairs = rng.permutation(pairs)[:n_inter]
    u, i = pairs // n_items, pairs % n_items + n_users
    src = np.concatenate([u, i])
    dst = np.concatenate([i, u])
    deg = np.bincount(src, minlength=n_users + n_items).astype(np.float64)
    w = 1.0 / np.sqrt(deg[src] * deg[dst])
    return (torch.from_numpy(src.astype(np.int64)), torch.from_numpy(dst.astype(np.int64)),
            torch.from_numpy(w.astype(np.float32)))


class NGCF(nn.Module):
    def __init__(self, n_users, n_items, n_inter, dim=64, n_layers=3):
        super().__init__()
        self.n_users, self.n_items = n_users, n_items
        self.n = n_users + n_items
        self.user_emb = nn.Parameter(torch.empty(n_users, dim))
        self.item_emb = nn.Parameter(torch.empty(n_items, dim))
        nn.init.xavier_uniform_(self.user_emb)
        nn.init.xavier_uniform_(self.item_emb)
        self.W1 = nn.ModuleList([nn.Linear(dim, dim) for _ in range(n_layers)])
        self.W2 = nn.ModuleList([nn.Linear(dim, dim) for _ in range(n_layers)])
        src, dst, w = ngcf_graph(n_users, n_items, n_inter)
        self.register_buffer("src", src)
        self.register_buffer("dst", dst)
        self.register_buffer("w", w)
        self.score_scale, self.score_bias = 1.0, 0.0  # set by _calibrate()

    # How A_hat @ E is aggregated (torch.sparse does not export to ONNX):
    #   "index_add"  : zeros.index_add(0, dst, msg)           (default)
    #   "scatter_add": zeros.scatter_add(0, dst[:,None].expand(-1,d), msg)
    #   "index_put"  : zeros.index_put_((dst,), msg, accumulate=True)
    AGGS = ("index_add", "scatter_add", "index_put")
    agg = "index_add"

    def propagate(self, E):
        msg = E[self.src] * self.w.unsqueeze(1)
        z = E.new_zeros(self.n, E.shape[1])
        if self.agg == "index_add":
            return z.index_add(0, self.dst, msg)
        if self.agg == "scatter_add":
            return z.scatter_add(0, self.dst.unsqueeze(1).expand(-1, E.shape[1]), msg)
        if self.agg == "index_put":
            return z.index_put_((self.dst,), msg, accumulate=True)
        raise ValueError(self.agg)

    def scores(self, users, items):
        E = torch.cat([self.user_emb, self.item_emb], dim=0)
        all_E = [E]
        for W1, W2 in zip(self.W1, self.W2):
            side = self.propagate(E)
            E = F.leaky_relu(W1(side + E) + W2(E * side), negative_slope=0.2)
            all_E.append(E)
        final = torch.cat(all_E, dim=1)
        u = final[users]
        i = final[items + self.n_users]
        return torch.sum(u * i, dim=1)

    def forward(self, users, items):
        return torch.sigmoid(self.score_scale * self.scores(users, items) + self.score_bias)


# --------------------------------------------------------------------------- AutoInt
class InteractingLayer(nn.Module):
    def __init__(self, in_dim, head_num=2, head_dim=16):
        super().__init__()
        self.h, self.dh = head_num, head_dim
        out = head_num * head_dim
        self.W_q = nn.Linear(in_dim, out, bias=False)
        self.W_k = nn.Linear(in_dim, out, bias=False)
        self.W_v = nn.Linear(in_dim, out, bias=False)
        self.W_res = nn.Linear(in_dim, out, bias=False)

    def forward(self, x):  # [B, F, in]
        B, Fn = x.shape[0], x.shape[1]
        q = self.W_q(x).view(B, Fn, self.h, self.dh).transpose(1, 2)  # [B,H,F,dh]
        k = self.W_k(x).view(B, Fn, self.h, self.dh).transpose(1, 2)
        v = self.W_v(x).view(B, Fn, self.h, self.dh).transpose(1, 2)
        att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.dh), -1)
        o = (att @ v).transpose(1, 2).reshape(B, Fn, self.h * self.dh)
        return F.relu(o + self.W_res(x))


class AutoInt(nn.Module):
    def __init__(self, cards, dim=16, n_layers=3, head_num=2, head_dim=16):
        super().__init__()
        self.emb = FieldEmb(cards, dim)
        d = head_num * head_dim
        self.layers = nn.ModuleList(
            [InteractingLayer(dim if i == 0 else d, head_num, head_dim) for i in range(n_layers)])
        self.out = nn.Linear(len(cards) * d, 1)

    def forward(self, sparse):
        x = self.emb(sparse)
        for layer in self.layers:
            x = layer(x)
        return torch.sigmoid(self.out(torch.flatten(x, start_dim=1)))


# --------------------------------------------------------------------------- registry
MODELS = ["dlrm_avazu", "dlrm_criteo", "deepfm", "xdeepfm", "dcnv2", "wide_deep", "ngcf", "autoint"]

# spec: dataset / input format for data/gen.py, input names+dims (symbolic), outputs
SPECS = {
    "dlrm_avazu": dict(dataset="avazu", format="dlrm",
                       inputs=[("dense", "float32", ["B", 13]),
                               ("sparse_indices", "int64", [22, "L"]),
                               ("sparse_offsets", "int64", [22, "B"])]),
    "dlrm_criteo": dict(dataset="criteo", format="dlrm",
                        inputs=[("dense", "float32", ["B", 13]),
                                ("sparse_indices", "int64", [26, "L"]),
                                ("sparse_offsets", "int64", [26, "B"])]),
    "deepfm": dict(dataset="avazu", format="plain", inputs=[("sparse", "int64", ["B", 22])]),
    "xdeepfm": dict(dataset="avazu", format="plain", inputs=[("sparse", "int64", ["B", 22])]),
    "dcnv2": dict(dataset="criteo", format="plain",
                  inputs=[("dense", "float32", ["B", 13]), ("sparse", "int64", ["B", 26])]),
    "wide_deep": dict(dataset="criteo", format="plain",
                      inputs=[("dense", "float32", ["B", 13]), ("sparse", "int64", ["B", 26])]),
    "ngcf": dict(dataset="avazu", format="ngcf",
                 inputs=[("users", "int64", ["B"]), ("items", "int64", ["B"])]),
    "autoint": dict(dataset="avazu", format="plain", inputs=[("sparse", "int64", ["B", 22])]),
}
OUTPUT_NAME = "prob"


def cap(size):
    return SMALL_ROWS if size == "small" else None


def build(name, size="small", seed=0):
    assert size in ("small", "full"), size
    torch.manual_seed(seed)
    c = cap(size)
    av = gen.capped_cards("avazu", c)
    cr = gen.capped_cards("criteo", c)
    if name == "dlrm_avazu":
        m = DLRM(av, 64, [13, 512, 256, 64], [512, 512, 256, 1])
    elif name == "dlrm_criteo":
        m = DLRM(cr, 16, [13, 512, 256, 64, 16], [512, 256, 1])
    elif name == "deepfm":
        m = DeepFM(av)
    elif name == "xdeepfm":
        m = XDeepFM(av)
    elif name == "dcnv2":
        m = DCNv2(cr)
    elif name == "wide_deep":
        m = WideDeep(cr)
    elif name == "ngcf":
        if size == "small":
            m = NGCF(SMALL_ROWS, SMALL_ROWS, 20_000)
        else:
            m = NGCF(gen.NGCF_USERS, gen.NGCF_ITEMS, 1_000_000)
    elif name == "autoint":
        m = AutoInt(av)
    else:
        raise KeyError(name)
    m.eval()
    _calibrate(m, name, size)
    return m, SPECS[name]


def _head(m):
    if isinstance(m, DLRM):
        return m.top_l[-1]
    if isinstance(m, (DCNv2, AutoInt)):
        return m.out
    return None


@torch.no_grad()
def _calibrate(m, name, size, batch=256, seed=999):
    """Rescale the final linear (or NGCF's score scale) so the pre-sigmoid logit has
    mean ~0 and std ~1 on a calibration batch: outputs stay far from saturation so
    a wrong import shows up numerically. Deterministic."""
    x = make_inputs(name, size, batch, seed, multi_hot=2)
    args = [torch.from_numpy(x[k]) for k, _, _ in SPECS[name]["inputs"]]
    if isinstance(m, NGCF):
        m.score_scale, m.score_bias = 1.0, 0.0
        z = m.scores(*args).double()
        m.score_scale, m.score_bias = float(1.0 / z.std()), float(-z.mean() / z.std())
        return
    head = _head(m)
    if head is None:
        return
    z = torch.logit(m(*args).double().clamp(1e-12, 1 - 1e-12))
    mu, sd = float(z.mean()), float(z.std())
    head.weight.div_(sd)
    head.bias.sub_(mu).div_(sd)


def make_inputs(name, size, batch, seed, multi_hot=None):
    """numpy inputs (dict name -> array) via data/gen.py."""
    s = SPECS[name]
    if multi_hot is None:
        multi_hot = 1
    return gen.generate(s["dataset"], batch, seed, s["format"], multi_hot, cap(size))
