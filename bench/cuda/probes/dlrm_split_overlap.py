"""Probe: does splitting DLRM's top layer by dependency pay on the GPU?

DLRM's first top layer reads [bottom | pairwise dots of bottom and the 26
embeddings]. 325 of its 367 input features (the embedding-embedding dots) do
not depend on the bottom MLP, so their share of the layer (a 4096x512x325
GEMM) can run on a second stream while the bottom MLP runs; after the bottom
MLP only a 4096x512x42 GEMM ([bottom | bottom-embedding dots]) is left, adding
the first part through its C. This script times both schedules of the same
model (DLRM-Criteo shapes, fp32, TF32 off) as CUDA graphs in PyTorch, so the
gain of the overlap is measured before the compiler does it.

    python3 bench/cuda/probes/dlrm_split_overlap.py [--batch 4096]
"""
import argparse

import torch


def timed(fn, reps=200):
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        out = fn()
    for _ in range(20):
        g.replay()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    ts.sort()
    return ts[len(ts) // 2], out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=4096)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    dev = "cuda"
    n, f, d = args.batch, 26, 16
    lin = lambda i, o: torch.nn.Linear(i, o).to(dev)
    bottom = [lin(13, 512), lin(512, 256), lin(256, 64), lin(64, 16)]
    top = [lin(367, 512), lin(512, 256), lin(256, 1)]
    x = torch.randn(n, 13, device=dev)
    emb = torch.randn(n, f, d, device=dev) * 0.1
    li, lj = torch.tril_indices(f + 1, f + 1, offset=-1, device=dev)
    # Feature order of the flat interaction: pairs (i, 0) are the bottom-embedding dots.
    dense_pairs = (lj == 0).nonzero().flatten()
    emb_pairs = (lj != 0).nonzero().flatten()
    w4, b4 = top[0].weight, top[0].bias
    w_d = torch.cat([w4[:, :d], w4[:, d + dense_pairs]], 1).contiguous()  # [512, 42]
    w_e = w4[:, d + emb_pairs].t().contiguous()  # [325, 512]
    ei, ej = li[emb_pairs] - 1, lj[emb_pairs] - 1

    def bottom_mlp():
        b = x
        for layer in bottom:
            b = torch.relu(layer(b))
        return b

    def tail(h):
        h = torch.relu(top[1](h))
        return torch.sigmoid(top[2](h))

    def serial():
        b = bottom_mlp()
        t = torch.cat([b[:, None], emb], 1)
        z = torch.bmm(t, t.transpose(1, 2))[:, li, lj]
        return tail(torch.relu(top[0](torch.cat([b, z], 1))))

    side = torch.cuda.Stream()

    def split():
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            ze = torch.bmm(emb, emb.transpose(1, 2))[:, ei, ej]
            part = torch.addmm(b4, ze, w_e)
        b = bottom_mlp()
        dots = torch.bmm(emb, b[:, :, None])[:, :, 0]
        torch.cuda.current_stream().wait_stream(side)
        h = torch.relu(torch.addmm(part, torch.cat([b, dots], 1), w_d.t()))
        return tail(h)

    def split_one_stream():
        ze = torch.bmm(emb, emb.transpose(1, 2))[:, ei, ej]
        part = torch.addmm(b4, ze, w_e)
        b = bottom_mlp()
        dots = torch.bmm(emb, b[:, :, None])[:, :, 0]
        h = torch.relu(torch.addmm(part, torch.cat([b, dots], 1), w_d.t()))
        return tail(h)

    with torch.no_grad():
        rounds = {"serial": [], "split, two streams": [], "split, one stream": []}
        outs = {}
        for _ in range(3):
            schedules = (("serial", serial), ("split, two streams", split), ("split, one stream", split_one_stream))
            for name, fn in schedules:
                ms, out = timed(fn)
                rounds[name].append(ms)
                outs[name] = out.clone()
        a367, a325, a42 = (torch.randn(n, k, device=dev) for k in (367, 325, 42))
        c512 = torch.randn(n, 512, device=dev)
        parts = {
            "bottom MLP": bottom_mlp,
            "top 367->512": lambda: top[0](a367),
            "emb part 325->512": lambda: torch.addmm(b4, a325, w_e),
            "dense part 42->512 (+C)": lambda: torch.addmm(c512, a42, w_d.t()),
        }
        ref = outs["serial"]
        print(f"DLRM-Criteo shapes, batch {n}, fp32 (TF32 off), CUDA-graph replay median, "
              f"{torch.cuda.get_device_name()} (measured)")
        for name, ms in rounds.items():
            err = (outs[name] - ref).abs().max().item()
            print(f"  {name:24s} " + " / ".join(f"{v * 1e3:.1f}" for v in ms) + f" us  max|diff| {err:.1e}")
        for name, fn in parts.items():
            print(f"  part {name:24s} {timed(fn)[0] * 1e3:.1f} us")


if __name__ == "__main__":
    main()
