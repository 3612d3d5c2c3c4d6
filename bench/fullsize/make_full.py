#!/usr/bin/env python3
"""A zoo model at its published table sizes, without torch (issue 39).

  python3 bench/fullsize/make_full.py --model dlrm_criteo [--exporter ts|dynamo]
      [--max-rows R] [--out DIR] [--seed S]

Takes the small zoo export (zoo/onnx/<model>.<exporter>.onnx: every table
capped at 1000 rows, the graph otherwise what torch.onnx exported) and writes
the same graph with each embedding table at its full public cardinality
(data/gen.py: Criteo Kaggle 26 tables, 33.8 M rows; Avazu 22 tables, 9.4 M rows),
optionally capped at --max-rows per table (MLPerf caps Criteo 1TB at 40 M). The
rows are uniform in [-0.05, 0.05] (zoo/models.py's init), seeded; the graph and
every non-table weight are the zoo model's. Tables go to one external data
file next to the model, each at a 4096-byte aligned offset, as onnx's own
external-data writer lays them out, so the model's directory holds:
  <model>.<exporter>.full.onnx   (graph + small weights, ~100 KB)
  <model>.<exporter>.full.data   (the tables, GBs)
numpy + onnx only; memory stays at one table chunk, not the whole file.
"""
import argparse
import os
import re
import sys

import numpy as np
import onnx

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "data"))
import gen  # noqa: E402

# Table initializer name -> field index, and the dataset of each model.
TABLES = {
    "dlrm_criteo": ("criteo", re.compile(r"^emb_l\.(\d+)\.weight$")),
    "dlrm_avazu": ("avazu", re.compile(r"^emb_l\.(\d+)\.weight$")),
}
CHUNK_ROWS = 1 << 20
ALIGN = 4096


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", choices=sorted(TABLES), default="dlrm_criteo")
    ap.add_argument("--exporter", choices=["ts", "dynamo"], default="ts")
    ap.add_argument("--max-rows", type=int, default=None, help="cap each table (MLPerf Criteo 1TB: 40000000)")
    ap.add_argument("--out", default=os.path.join(ROOT, "out", "full"))
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()

    dataset, pattern = TABLES[a.model]
    cards = gen.cards(dataset)
    src = os.path.join(ROOT, "zoo", "onnx", f"{a.model}.{a.exporter}.onnx")
    m = onnx.load(src)  # small: loads its (shared) external weights too
    os.makedirs(a.out, exist_ok=True)
    stem = f"{a.model}.{a.exporter}.full"
    data_name = stem + ".data"
    rng = np.random.default_rng(a.seed)
    total_rows = table_bytes = 0
    with open(os.path.join(a.out, data_name), "wb") as f:
        for t in m.graph.initializer:
            hit = pattern.match(t.name)
            if hit is None:
                continue
            rows = cards[int(hit.group(1))]
            if a.max_rows:
                rows = min(rows, a.max_rows)
            dim = int(t.dims[1])
            pad = (-f.tell()) % ALIGN
            f.write(b"\0" * pad)
            offset = f.tell()
            for start in range(0, rows, CHUNK_ROWS):
                n = min(CHUNK_ROWS, rows - start)
                f.write(rng.uniform(-0.05, 0.05, size=(n, dim)).astype(np.float32).tobytes())
            length = rows * dim * 4
            t.ClearField("raw_data")
            t.ClearField("float_data")
            del t.dims[:]
            t.dims.extend([rows, dim])
            t.data_location = onnx.TensorProto.EXTERNAL
            del t.external_data[:]
            for k, v in (("location", data_name), ("offset", str(offset)), ("length", str(length))):
                e = t.external_data.add()
                e.key, e.value = k, v
            total_rows += rows
            table_bytes += length
    onnx.save(m, os.path.join(a.out, stem + ".onnx"))
    print(f"{os.path.join(a.out, stem + '.onnx')}: {total_rows} table rows, {table_bytes / 2**30:.2f} GiB of f32 tables "
          f"in {data_name}")


if __name__ == "__main__":
    main()
