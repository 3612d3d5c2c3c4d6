"""Hand-optimized PyTorch versions of the zoo's DLRM, DeepFM, xDeepFM and
DCN-v2 — the bar a careful engineer reaches in an afternoon (issue 6):
every table of a model in one concatenated table read by one gather (ids
shifted by per-table row offsets), DLRM's interaction as one bmm plus one flat
index, FM vectorised, CIN as outer product + one large GEMM per layer with
the embedding dimension folded into the GEMM's rows, DCN-v2's first cross
layer and first DNN layer as one GEMM. Built from the zoo module's own weights,
so outputs equal the zoo model's up to summation order. `dtype` stores the
weights in that type (bf16: no per-call casts, unlike autocast).
How it runs (CUDA Graph or compile reduce-overhead) is engines.py's business.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def _mlp_params(seq):
    """[(weight, bias or None)] of the nn.Linear layers of a zoo mlp(); every
    layer but possibly the last is followed by ReLU there."""
    return [(m.weight, m.bias) for m in seq if isinstance(m, nn.Linear)]


def _row_offsets(embs):
    rows = [e.weight.shape[0] for e in embs]
    base = torch.tensor([0] + rows[:-1], dtype=torch.int64).cumsum(0)
    return base


class Hand(nn.Module):
    """Shared plumbing: parameters registered as buffers in one dtype."""

    def __init__(self, dtype):
        super().__init__()
        self.dtype = dtype

    def keep(self, name, t):
        t = t.detach().clone()
        self.register_buffer(name, t.to(self.dtype) if t.is_floating_point() else t)

    def keep_mlp(self, prefix, seq):
        n = 0
        for i, (w, b) in enumerate(_mlp_params(seq)):
            self.keep(f"{prefix}{i}_w", w)
            self.keep(f"{prefix}{i}_b", b if b is not None else torch.zeros(w.shape[0]))
            n += 1
        return n

    def run_mlp(self, prefix, n, x, relu_last, start=0):
        for i in range(start, n):
            x = torch.addmm(getattr(self, f"{prefix}{i}_b"), x, getattr(self, f"{prefix}{i}_w").t())
            if i < n - 1 or relu_last:
                x = torch.relu(x)
        return x

    def gather(self, sparse):
        """[B, F] field ids -> [B, F, width] rows of the one concatenated table."""
        return F.embedding(sparse + self.base, self.table)


class HandDLRM(Hand):
    def __init__(self, m, dtype=torch.float32):
        super().__init__(dtype)
        self.keep("table", torch.cat([e.weight for e in m.emb_l], 0))
        self.keep("base", _row_offsets(m.emb_l).unsqueeze(1))  # [T, 1]
        self.nbot = self.keep_mlp("bot", m.bot_l)
        self.ntop = self.keep_mlp("top", m.top_l)
        ni = len(m.emb_l) + 1
        self.keep("flat", torch.tensor([i * ni + j for i in range(ni) for j in range(i)], dtype=torch.int64))

    def forward(self, dense, sparse_indices, sparse_offsets):
        T, L = sparse_indices.shape
        x = self.run_mlp("bot", self.nbot, dense.to(self.dtype), relu_last=True)
        idx = (sparse_indices + self.base).reshape(-1)
        step = torch.arange(T, device=idx.device, dtype=torch.int64).unsqueeze(1) * L
        offs = (sparse_offsets + step).reshape(-1)
        ly = F.embedding_bag(idx, self.table, offs, mode="sum")  # [T*B, d], one kernel for all tables
        B, d = x.shape
        feats = torch.cat([x.unsqueeze(0), ly.view(T, B, d)], 0).transpose(0, 1)  # [B, T+1, d]
        z = torch.bmm(feats, feats.transpose(1, 2)).view(B, -1)
        r = torch.cat([x, z.index_select(1, self.flat)], 1)
        return torch.sigmoid(self.run_mlp("top", self.ntop, r, relu_last=False).float())


class HandFM(Hand):
    """DeepFM / xDeepFM input side: one table whose rows hold the field's
    embedding and, in the last column, its first-order weight."""

    def __init__(self, m, dtype):
        super().__init__(dtype)
        self.keep("table", torch.cat([torch.cat([e.weight, w.weight], 1)
                                      for e, w in zip(m.emb.embs, m.linear.embs)], 0))
        self.keep("base", _row_offsets(m.emb.embs).unsqueeze(0))  # [1, F]
        self.keep("lin_bias", m.linear.bias)
        self.nd = self.keep_mlp("dnn", m.dnn)
        self.keep("dnn_out", m.dnn_out.weight)

    def embed(self, sparse):
        """(embeddings [B, F, D], first-order logit [B, 1], DNN logit [B, 1])."""
        g = self.gather(sparse)
        e, lin = g[..., :-1], g[..., -1].sum(1, keepdim=True) + self.lin_bias
        h = self.run_mlp("dnn", self.nd, e.reshape(e.shape[0], -1), relu_last=True)
        return e, torch.addmm(lin, h, self.dnn_out.t())


class HandDeepFM(HandFM):
    def __init__(self, m, dtype=torch.float32):
        super().__init__(m, dtype)

    def forward(self, sparse):
        e, logit = self.embed(sparse)
        s = e.sum(1)
        fm = 0.5 * (s * s - (e * e).sum(1)).sum(1, keepdim=True)
        return torch.sigmoid((logit + fm).float())


class HandXDeepFM(HandFM):
    def __init__(self, m, dtype=torch.float32):
        super().__init__(m, dtype)
        self.ncin = len(m.cin.conv1ds)
        sizes = [c.out_channels for c in m.cin.conv1ds]
        wc = m.cin_linear.weight.view(-1).split(sizes)
        for k, conv in enumerate(m.cin.conv1ds):
            self.keep(f"cin{k}_wt", conv.weight.squeeze(2).t())  # [H*M, S], rows in (h, m) order
            self.keep(f"cin{k}_b", conv.bias)
            self.keep(f"cin{k}_out", wc[k].unsqueeze(1))  # [S, 1]

    def forward(self, sparse):
        e, logit = self.embed(sparse)
        B, M, D = e.shape
        x0 = e.transpose(1, 2).reshape(B * D, M)  # one row per (sample, embedding dim)
        h = x0
        for k in range(self.ncin):
            z = (h.unsqueeze(2) * x0.unsqueeze(1)).reshape(B * D, -1)  # outer product, [B*D, H*M]
            h = torch.relu(torch.addmm(getattr(self, f"cin{k}_b"), z, getattr(self, f"cin{k}_wt")))
            pooled = h.view(B, D, -1).sum(1)  # [B, S]
            logit = torch.addmm(logit, pooled, getattr(self, f"cin{k}_out"))
        return torch.sigmoid(logit.float())


class HandDCNv2(Hand):
    def __init__(self, m, dtype=torch.float32):
        super().__init__(dtype)
        self.keep("table", torch.cat([e.weight for e in m.emb.embs], 0))
        self.keep("base", _row_offsets(m.emb.embs).unsqueeze(0))
        self.ncross = len(m.cross)
        d0 = m.cross[0].weight.shape[1]
        self.nd = self.keep_mlp("dnn", m.dnn)
        # first cross layer and first DNN layer both read x0: one GEMM
        self.keep("first_w", torch.cat([m.cross[0].weight, m.dnn[0].weight], 0))
        self.keep("first_b", torch.cat([m.cross[0].bias, m.dnn[0].bias], 0))
        self.d0 = d0
        for k, c in enumerate(m.cross[1:], start=1):
            self.keep(f"cross{k}_w", c.weight)
            self.keep(f"cross{k}_b", c.bias)
        self.keep("out_wx", m.out.weight[:, :d0])
        self.keep("out_wh", m.out.weight[:, d0:])
        self.keep("out_b", m.out.bias)

    def forward(self, dense, sparse):
        e = self.gather(sparse)
        x0 = torch.cat([dense.to(self.dtype), e.reshape(e.shape[0], -1)], 1)
        first = torch.addmm(self.first_b, x0, self.first_w.t())
        xl = torch.addcmul(x0, x0, first[:, :self.d0])
        h = torch.relu(first[:, self.d0:])
        for k in range(1, self.ncross):
            xl = torch.addcmul(xl, x0, torch.addmm(getattr(self, f"cross{k}_b"), xl, getattr(self, f"cross{k}_w").t()))
        h = self.run_mlp("dnn", self.nd, h, relu_last=True, start=1)
        out = torch.addmm(torch.addmm(self.out_b, xl, self.out_wx.t()), h, self.out_wh.t())
        return torch.sigmoid(out.float())


BUILDERS = {"dlrm_criteo": HandDLRM, "dlrm_avazu": HandDLRM, "deepfm": HandDeepFM, "xdeepfm": HandXDeepFM,
            "dcnv2": HandDCNv2}


def build(model_name, zoo_module, dtype=torch.float32):
    """The hand-optimized module for a zoo model (KeyError for models without one)."""
    return BUILDERS[model_name](zoo_module, dtype).eval()
