#!/usr/bin/env python3
"""Regenerates the .npy/.npz fixtures used by test/support/npz_test.cc.

Run from anywhere: python3 test/data/npz/make_fixtures.py
The expected values are duplicated in npz_test.cc; keep them in sync.
"""
import os
import struct
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def path(name):
    return os.path.join(HERE, name)


def mixed_arrays():
    return {
        "f32": (np.arange(6, dtype=np.float32) * 0.5 - 1.0).reshape(2, 3),
        "f64": np.array([1.5, -2.25, 1e300], dtype=np.float64),
        "f16": np.array([0.5, -1.0, 65504.0], dtype=np.float16),
        "i64": np.array([-(2**40), 0, 2**62], dtype=np.int64),
        "i32": np.array([[-7], [8]], dtype=np.int32),
        "i8": np.array([-128, 127], dtype=np.int8),
        "u8": np.array([0, 255], dtype=np.uint8),
        "flags": np.array([True, False, True]),
        "scalar": np.float32(3.5),
        "empty": np.zeros((0, 3), dtype=np.float32),
    }


def npy_bytes(arr):
    import io
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.asanyarray(arr))
    return buf.getvalue()


def write_zip64_everywhere(out, members):
    """Writes a zip whose central directory uses ZIP64 extras for every size
    and offset, plus a ZIP64 end-of-central-directory record, as a writer of
    multi-GB archives would. members: list of (name, npy bytes, deflate?)."""
    body, central = b"", b""
    for name, data, deflate in members:
        comp = data
        if deflate:
            c = zlib.compressobj(6, zlib.DEFLATED, -15)
            comp = c.compress(data) + c.flush()
        crc, method, fname = zlib.crc32(data), (8 if deflate else 0), name.encode()
        local_extra = struct.pack("<HHQQ", 1, 16, len(data), len(comp))
        local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, method, 0, 0x21, crc,
                            0xFFFFFFFF, 0xFFFFFFFF, len(fname), len(local_extra))
        offset = len(body)
        body += local + fname + local_extra + comp
        cextra = struct.pack("<HHQQQ", 1, 24, len(data), len(comp), offset)
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, method, 0, 0x21,
                               crc, 0xFFFFFFFF, 0xFFFFFFFF, len(fname), len(cextra), 0, 0, 0,
                               0, 0xFFFFFFFF) + fname + cextra
    cd_off, cd_size, n = len(body), len(central), len(members)
    z64 = struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, n, n, cd_size, cd_off)
    loc = struct.pack("<IIQI", 0x07064B50, 0, cd_off + cd_size, 1)
    eocd = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    with open(out, "wb") as f:
        f.write(body + central + z64 + loc + eocd)


def main():
    arrays = mixed_arrays()
    np.savez(path("mixed.npz"), **arrays)
    np.savez_compressed(path("mixed_compressed.npz"), **arrays)
    np.save(path("fortran.npy"), np.asfortranarray(np.arange(24, dtype=np.int32).reshape(2, 3, 4)))
    np.save(path("bigendian.npy"), np.arange(4, dtype=">f4"))
    np.save(path("uint64.npy"), np.array([1, 2], dtype="<u8"))

    fortran = np.asfortranarray(np.arange(6, dtype=np.float64).reshape(2, 3))
    write_zip64_everywhere(path("zip64.npz"), [
        ("dense.npy", npy_bytes(arrays["f32"]), False),
        ("fortran.npy", npy_bytes(fortran), True),
    ])
    with np.load(path("zip64.npz")) as z:  # the fixture must be valid for numpy itself
        assert np.array_equal(z["dense"], arrays["f32"]) and np.array_equal(z["fortran"], fortran)

    raw = open(path("mixed.npz"), "rb").read()
    with open(path("truncated.npz"), "wb") as f:
        f.write(raw[: len(raw) // 2])
    # Flip the first data byte of the first member ('f32'): the zip structure
    # stays intact, only the CRC no longer matches.
    magic = raw.index(b"\x93NUMPY")
    header_len = struct.unpack("<H", raw[magic + 8: magic + 10])[0]
    data_at = magic + 10 + header_len
    bad = bytearray(raw)
    bad[data_at] ^= 0xFF
    with open(path("bad_crc.npz"), "wb") as f:
        f.write(bytes(bad))


if __name__ == "__main__":
    main()
