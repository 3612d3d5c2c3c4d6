#!/usr/bin/env python3
"""Synthetic input batches for the CAGR model zoo (numpy only, no torch).

  python3 data/gen.py --dataset avazu|criteo --batch N --seed S
                      [--format plain|dlrm|ngcf] [--multi-hot P] [--cap-rows R]
                      [--ids zipf|uniform] -o x.npz

Formats (keys are the ONNX input names of zoo/ models):
  plain  avazu : sparse i64 [B,22]
         criteo: dense f32 [B,13], sparse i64 [B,26]
  dlrm   dense f32 [B,13], sparse_indices i64 [T,L], sparse_offsets i64 [T,B]
         (L = B*P; table t's bag b is indices[t][offsets[t][b]:offsets[t][b+1]])
  ngcf   users i64 [B], items i64 [B]  (--cap-rows R caps users and items at R)

Sparse ids are Zipf-skewed (a=1.2), folded modulo the field cardinality and
passed through a fixed per-field bijection (affine map mod card) so the hot ids
are not all 0; --ids uniform draws every row with equal probability instead
(the cache-hostile worst case).  --cap-rows R folds ids (id % R) into the capped tables of the
'small' model variants (every table min(card, R) rows).
"""
import argparse
import math

import numpy as np

# Kaggle Avazu train.csv unique counts, field order as used by the zoo models.
AVAZU_FIELDS = ["hour", "C1", "banner_pos", "site_id", "site_domain", "site_category",
                "app_id", "app_domain", "app_category", "device_id", "device_ip",
                "device_model", "device_type", "device_conn_type", "C14", "C15", "C16",
                "C17", "C18", "C19", "C20", "C21"]
AVAZU_CARDS = [240, 7, 7, 4737, 7745, 26, 8552, 559, 36, 2686408, 6729486, 8251, 5, 4,
               2626, 8, 9, 435, 4, 68, 172, 60]
# Criteo Kaggle (facebookresearch/dlrm Kaggle preprocessing) C1..C26.
CRITEO_CARDS = [1460, 583, 10131227, 2202608, 305, 24, 12517, 633, 3, 93145, 5683,
                8351593, 3194, 27, 14992, 5461306, 10, 5652, 2173, 4, 7046547, 18, 15,
                286181, 105, 142572]
CRITEO_NUM_DENSE = 13
NGCF_USERS, NGCF_ITEMS = 29858, 40981
ZIPF_A = 1.2
# Poisson means of the 13 Criteo integer features (rough shape of the real data).
_CRITEO_DENSE_LAM = [3.5, 100.0, 25.0, 7.0, 18000.0, 115.0, 16.0, 12.0, 100.0, 0.6,
                     2.7, 1.0, 8.0]

_PRIMES = [1000003, 1299709, 15485863, 32452843, 49979687, 67867967, 86028121, 104395301]


def cards(dataset):
    return {"avazu": AVAZU_CARDS, "criteo": CRITEO_CARDS}[dataset]


def capped_cards(dataset, cap_rows=None):
    c = cards(dataset)
    return list(c) if not cap_rows else [min(x, cap_rows) for x in c]


def _field_bijection(card, field):
    """Fixed (seed-independent) affine bijection of [0, card)."""
    for k in range(len(_PRIMES)):
        a = _PRIMES[(field + k) % len(_PRIMES)]
        if math.gcd(a, card) == 1:
            return a, (field * 7919 + 17) % card
    return 1, 0


def zipf_ids(rng, card, n, field, cap_rows=None, dist="zipf"):
    if dist == "uniform":  # the worst case for caches: every row equally likely
        raw = rng.integers(0, card, size=n, dtype=np.int64)
    else:
        raw = (rng.zipf(ZIPF_A, size=n).astype(np.int64) - 1) % card
    a, b = _field_bijection(card, field)
    ids = (raw * a + b) % card
    if cap_rows:
        ids = ids % min(card, cap_rows)
    return ids.astype(np.int64)


def gen_sparse(dataset, batch, seed, cap_rows=None, dist="zipf"):
    rng = np.random.default_rng(seed)
    cs = cards(dataset)
    cols = [zipf_ids(rng, c, batch, f, cap_rows, dist) for f, c in enumerate(cs)]
    return np.stack(cols, axis=1).astype(np.int64)  # [B, F]


def gen_dense(batch, seed):
    rng = np.random.default_rng(seed + 7777)
    lam = np.asarray(_CRITEO_DENSE_LAM)
    # gamma-Poisson mixture (heavier tail than Poisson), then log(1+x) like DLRM
    x = rng.poisson(rng.gamma(1.0, lam, size=(batch, len(lam))))
    return np.log1p(x.astype(np.float64)).astype(np.float32)


def gen_plain(dataset, batch, seed, cap_rows=None, dist="zipf"):
    out = {}
    if dataset == "criteo":
        out["dense"] = gen_dense(batch, seed)
    out["sparse"] = gen_sparse(dataset, batch, seed, cap_rows, dist)
    return out


def gen_dlrm(dataset, batch, seed, multi_hot=1, cap_rows=None, dist="zipf"):
    """DLRM EmbeddingBag format; every bag has exactly multi_hot ids."""
    rng = np.random.default_rng(seed)
    cs = cards(dataset)
    p = int(multi_hot)
    idx = np.stack([zipf_ids(rng, c, batch * p, f, cap_rows, dist) for f, c in enumerate(cs)])
    offs = np.tile(np.arange(batch, dtype=np.int64) * p, (len(cs), 1))
    return {"dense": gen_dense(batch, seed),
            "sparse_indices": idx.astype(np.int64),   # [T, B*P]
            "sparse_offsets": offs.astype(np.int64)}  # [T, B]


def gen_ngcf(batch, seed, cap_rows=None):
    rng = np.random.default_rng(seed)
    nu = min(NGCF_USERS, cap_rows) if cap_rows else NGCF_USERS
    ni = min(NGCF_ITEMS, cap_rows) if cap_rows else NGCF_ITEMS
    return {"users": zipf_ids(rng, nu, batch, 0), "items": zipf_ids(rng, ni, batch, 1)}


def generate(dataset, batch, seed, fmt="plain", multi_hot=1, cap_rows=None, dist="zipf"):
    if fmt == "plain":
        return gen_plain(dataset, batch, seed, cap_rows, dist)
    if fmt == "dlrm":
        return gen_dlrm(dataset, batch, seed, multi_hot, cap_rows, dist)
    if fmt == "ngcf":
        return gen_ngcf(batch, seed, cap_rows)
    raise ValueError(fmt)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", choices=["avazu", "criteo"], default="avazu")
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--format", choices=["plain", "dlrm", "ngcf"], default="plain")
    ap.add_argument("--multi-hot", type=int, default=1)
    ap.add_argument("--cap-rows", type=int, default=None)
    ap.add_argument("--ids", choices=["zipf", "uniform"], default="zipf",
                    help="id distribution: Zipf-skewed (a = ZIPF_A = 1.2, the default) or uniform over each table (worst case)")
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()
    d = generate(a.dataset, a.batch, a.seed, a.format, a.multi_hot, a.cap_rows, a.ids)
    np.savez(a.out, **d)
    for k, v in d.items():
        print(f"{k}: {v.dtype} {list(v.shape)}")


if __name__ == "__main__":
    main()
