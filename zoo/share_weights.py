#!/usr/bin/env python3
"""Stores the weights of a model's two exports once: every initializer larger
than 1 KiB moves to zoo/onnx/<model>.weights (ONNX external data), tensors
with identical bytes shared between the TorchScript and dynamo exports. The
graphs are unchanged; ONNX Runtime and CAGR read external data natively.
Halves the zoo in git and keeps the working tree small enough to travel.

  python3 zoo/share_weights.py [--dir zoo/onnx] [--models a,b]"""
import argparse
import hashlib
import os

import onnx
from onnx import numpy_helper

MIN_BYTES = 1024


def tensor_bytes(t):
    if t.HasField("raw_data"):
        return t.raw_data
    return numpy_helper.to_array(t).tobytes()


def externalize(model, blob, index, location):
    for t in model.graph.initializer:
        if t.data_location == onnx.TensorProto.EXTERNAL:
            continue
        data = tensor_bytes(t)
        if len(data) < MIN_BYTES:
            continue
        key = hashlib.sha1(data).hexdigest()
        if key not in index:
            pad = (-blob.tell()) % 64
            blob.write(b"\0" * pad)
            index[key] = (blob.tell(), len(data))
            blob.write(data)
        offset, length = index[key]
        for field in ("raw_data", "float_data", "int32_data", "int64_data", "double_data"):
            t.ClearField(field)
        t.data_location = onnx.TensorProto.EXTERNAL
        del t.external_data[:]
        for k, v in (("location", location), ("offset", str(offset)), ("length", str(length))):
            e = t.external_data.add()
            e.key, e.value = k, v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "onnx"))
    ap.add_argument("--models", default="")
    a = ap.parse_args()
    names = sorted({f.split(".")[0] for f in os.listdir(a.dir) if f.endswith(".onnx")})
    if a.models:
        names = [n for n in names if n in a.models.split(",")]
    for name in names:
        paths = [os.path.join(a.dir, f"{name}.{e}.onnx") for e in ("ts", "dynamo")]
        paths = [p for p in paths if os.path.exists(p)]
        location = f"{name}.weights"
        models = [onnx.load(p, load_external_data=True) for p in paths]
        index = {}
        with open(os.path.join(a.dir, location), "wb") as blob:
            for m in models:
                externalize(m, blob, index, location)
        for m, p in zip(models, paths):
            onnx.save_model(m, p)
        print(name, "->", location, os.path.getsize(os.path.join(a.dir, location)), "bytes,",
              len(index), "unique tensors")


if __name__ == "__main__":
    main()
