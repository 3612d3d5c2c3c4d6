"""Reads the initializers of an ONNX file without the onnx or protobuf packages.

The GPU machine has torch but no onnx, so bench/cuda/ cannot use
onnx.numpy_helper there. An ONNX file is a protobuf message; this module walks
its wire format just far enough to reach ModelProto.graph (field 7) ->
GraphProto.initializer (field 5) -> TensorProto, and decodes a tensor from
raw_data, the typed repeated fields, or external data (the zoo keeps every
initializer over 1 KiB in zoo/onnx/<model>.weights). Nothing has to be
prepared or carried: the zoo files that travel with the working tree suffice.
`check_against_onnx` compares it with onnx.numpy_helper where onnx is installed.
"""
import os
import struct

import numpy as np

# TensorProto.DataType -> numpy dtype (the types the zoo and the benchmark need).
DTYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32, 7: np.int64,
          9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64}
# TensorProto field numbers.
F_DIMS, F_DTYPE, F_FLOAT, F_INT32, F_INT64, F_NAME, F_RAW, F_DOUBLE, F_UINT64, F_EXTERNAL, F_LOCATION = (
    1, 2, 4, 5, 7, 8, 9, 10, 11, 13, 14)
# Packed element formats of the typed repeated fields: (struct code, is varint).
PACKED = {F_FLOAT: ("f", False), F_DOUBLE: ("d", False), F_INT32: (None, True), F_INT64: (None, True),
          F_UINT64: (None, True), F_DIMS: (None, True)}


class OnnxReadError(ValueError):
    pass


def _varint(buf, pos):
    result, shift = 0, 0
    while True:
        if pos >= len(buf):
            raise OnnxReadError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7


def _signed64(v):
    return v - (1 << 64) if v >= (1 << 63) else v


def fields(buf):
    """Yields (field number, wire type, value) of one message; value is an int
    for varint / fixed fields and a memoryview for length-delimited ones."""
    pos, end = 0, len(buf)
    while pos < end:
        key, pos = _varint(buf, pos)
        num, wt = key >> 3, key & 7
        if wt == 0:
            val, pos = _varint(buf, pos)
        elif wt == 1:
            val, pos = struct.unpack_from("<Q", buf, pos)[0], pos + 8
        elif wt == 5:
            val, pos = struct.unpack_from("<I", buf, pos)[0], pos + 4
        elif wt == 2:
            n, pos = _varint(buf, pos)
            if pos + n > end:
                raise OnnxReadError(f"field {num} runs past the end of its message")
            val, pos = buf[pos:pos + n], pos + n
        else:
            raise OnnxReadError(f"unsupported wire type {wt} (field {num})")
        yield num, wt, val


def _repeated(num, wt, val, out):
    """Appends one occurrence of a repeated scalar field, packed or not."""
    code, varint = PACKED[num]
    if wt != 2:
        if num == F_FLOAT:
            val = struct.unpack("<f", struct.pack("<I", val))[0]
        elif num == F_DOUBLE:
            val = struct.unpack("<d", struct.pack("<Q", val))[0]
        out.append(val)
    elif varint:
        pos = 0
        while pos < len(val):
            v, pos = _varint(val, pos)
            out.append(v)
    else:
        out.extend(struct.unpack(f"<{len(val) // struct.calcsize(code)}{code}", val))


def _tensor(buf, base_dir):
    t = {"dims": [], "dtype": 1, "name": "", "raw": None, "typed": {}, "external": {}, "location": 0}
    for num, wt, val in fields(buf):
        if num == F_NAME:
            t["name"] = bytes(val).decode()
        elif num == F_DTYPE:
            t["dtype"] = val
        elif num == F_RAW:
            t["raw"] = val
        elif num == F_LOCATION:
            t["location"] = val
        elif num == F_EXTERNAL:
            kv = {k: bytes(v).decode() for k, _, v in fields(val)}
            t["external"][kv.get(1, "")] = kv.get(2, "")
        elif num in PACKED:
            _repeated(num, wt, val, t["dims"] if num == F_DIMS else t["typed"].setdefault(num, []))
    return t["name"], _decode(t, base_dir)


def _decode(t, base_dir):
    name, shape = t["name"], tuple(_signed64(d) for d in t["dims"])
    dtype = DTYPES.get(t["dtype"])
    if dtype is None:
        raise OnnxReadError(f"initializer '{name}': data type {t['dtype']} is not supported by this reader")
    count = int(np.prod(shape)) if shape else 1
    if t["location"] == 1 or t["external"]:
        loc = t["external"].get("location")
        if not loc:
            raise OnnxReadError(f"initializer '{name}': external data without a location")
        path = os.path.join(base_dir, loc)
        offset, length = int(t["external"].get("offset", 0)), t["external"].get("length")
        with open(path, "rb") as f:
            f.seek(offset)
            data = f.read(int(length) if length else count * np.dtype(dtype).itemsize)
        arr = np.frombuffer(data, dtype=np.dtype(dtype).newbyteorder("<"))
    elif t["raw"] is not None:
        arr = np.frombuffer(bytes(t["raw"]), dtype=np.dtype(dtype).newbyteorder("<"))
    else:
        vals = next(iter(t["typed"].values()), [])
        if dtype in (np.int64, np.int32, np.int16, np.int8):
            vals = [_signed64(v) for v in vals]
        arr = np.asarray(vals, dtype=dtype)
    if arr.size != count:
        raise OnnxReadError(f"initializer '{name}': {arr.size} elements for shape {list(shape)}")
    return arr.astype(dtype, copy=False).reshape(shape)


def read_initializers(path):
    """{name: numpy array} of every initializer of the ONNX file's main graph."""
    with open(path, "rb") as f:
        buf = memoryview(f.read())
    base_dir = os.path.dirname(os.path.abspath(path))
    out = {}
    try:
        for num, _, graph in fields(buf):
            if num != 7:  # ModelProto.graph
                continue
            for gnum, _, tensor in fields(graph):
                if gnum == 5:  # GraphProto.initializer
                    name, arr = _tensor(tensor, base_dir)
                    out[name] = arr
    except (OnnxReadError, struct.error, OSError) as e:
        raise OnnxReadError(f"{path}: {e}") from e
    return out


def check_against_onnx(path):
    """(tensors compared, names that differ) against onnx.numpy_helper, or None
    when the onnx package is not installed."""
    try:
        import onnx
        from onnx import numpy_helper
    except ImportError:
        return None
    ours = read_initializers(path)
    theirs = {t.name: numpy_helper.to_array(t, base_dir=os.path.dirname(os.path.abspath(path)))
              for t in onnx.load(path, load_external_data=False).graph.initializer}
    bad = sorted(n for n in set(ours) | set(theirs)
                 if n not in ours or n not in theirs or ours[n].shape != theirs[n].shape
                 or not np.array_equal(ours[n], theirs[n]))
    return len(theirs), bad
