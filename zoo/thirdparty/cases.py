"""What every third-party fixture model shares: the Case record export.py
exports, and the seeded input generators (Zipf-like ids, variable bags).

A Case is one PyTorch model plus how its users call it: the flat ONNX input
names in forward order, a generator of numpy inputs for a batch, a function
that turns those arrays back into forward()'s arguments (a list of per-table
tensors stays a list), the TorchScript exporter's dynamic_axes and the dynamo
exporter's dynamic_shapes.
"""
import collections
import dataclasses
from typing import Any, Callable, Dict, List, Optional

import numpy as np


@dataclasses.dataclass
class Case:
    family: str                      # "deepctr" | "dlrm" | "variants"
    model: str                       # fixture model name (file stem)
    desc: str                        # one line: what the model is and how it is called
    module: Any                      # torch.nn.Module, already in eval()
    make_inputs: Callable[[int, int], "collections.OrderedDict[str, np.ndarray]"]  # (batch, seed)
    to_args: Callable[[Dict[str, np.ndarray]], tuple]  # numpy inputs -> forward() args
    input_names: List[str]
    output_names: List[str]
    dynamic_axes: Dict[str, Dict[int, str]]
    dynamic_shapes: Callable[[], Any]  # built lazily: torch.export.Dim objects
    extra_exports: List[tuple] = dataclasses.field(default_factory=list)  # (exporter, opset, batch_mode, kwargs)
    prob_output: Optional[str] = None  # defaults to output_names[0]


def zipf_ids(rng, shape, vocab, low=0, a=1.3):
    """Ids in [low, vocab) with a Zipf-like skew (a few hot rows, a long tail);
    a per-table permutation spreads the hot rows over the table."""
    span = vocab - low
    raw = (rng.zipf(a, size=shape) - 1) % span
    perm = rng.permutation(span)
    return (low + perm[raw]).astype(np.int64)


def bag_lengths(rng, batch, max_len, min_len=1):
    return rng.integers(min_len, max_len + 1, size=batch).astype(np.int64)


def offsets_of(lengths, include_last=False):
    off = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    return off if include_last else off[:-1]


def dense(rng, batch, n):
    return rng.random((batch, n), dtype=np.float32)


def od(*pairs):
    return collections.OrderedDict(pairs)


def equal_total_bags(rng, tables, batch, max_len):
    """Per-table bag lengths (each >= 1) that all sum to the same N, so the ids
    of every table stack into one [T, N] tensor as DLRM's loaders feed them."""
    n = int(rng.integers(batch, batch * max_len + 1))
    out = []
    for _ in range(tables):
        cuts = np.sort(rng.choice(np.arange(1, n), size=batch - 1, replace=False)) if batch > 1 else np.array([], np.int64)
        out.append(np.diff(np.concatenate([[0], cuts, [n]])).astype(np.int64))
    return out
