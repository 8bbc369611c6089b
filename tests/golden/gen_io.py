#!/usr/bin/python3
"""Writes the .npy/.npz files in tests/data/io/ with NumPy itself (NumPy 1.24).

Run with /usr/bin/python3:  /usr/bin/python3 tests/golden/gen_io.py
tests/io/npy_test.cpp and npz_test.cpp read them, and compare what jnp::save writes with them
byte for byte. Element i of an n-element array (C order) is:
  signed ints: 3*i - 7;  unsigned ints: 7*i;  floats (and bfloat16): 0.5*i - 1.25;  bool: i % 3 == 0
"""
import os
import zipfile

import numpy as np
from numpy.lib import format as npformat

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "io")
os.makedirs(OUT, exist_ok=True)

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64"]


def values(dtype, shape):
    n = int(np.prod(shape))
    i = np.arange(n)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        v = i % 3 == 0
    elif dt.kind == "i":
        v = 3 * i - 7
    elif dt.kind == "u":
        v = 7 * i
    else:
        v = 0.5 * i - 1.25
    return v.astype(dt).reshape(shape)


def path(name):
    return os.path.join(OUT, name)


# One file per dtype, as np.save writes it.
for dt in DTYPES:
    np.save(path(f"{dt}_2x3.npy"), values(dt, (2, 3)))
np.save(path("float32_scalar.npy"), np.array(3.5, np.float32))
np.save(path("int32_empty_0x3.npy"), np.zeros((0, 3), np.int32))
np.save(path("float64_2x3x4.npy"), values("float64", (2, 3, 4)))
np.save(path("int16_5.npy"), values("int16", (5,)))
np.save(path("uint8_1x1x1x1.npy"), values("uint8", (1, 1, 1, 1)))
np.save(path("bool_scalar.npy"), np.array(True))

# bfloat16 as jnp.save writes it: NumPy stores ml_dtypes.bfloat16 with descr '<V2' (the dtype's
# .str) and the raw bits. ml_dtypes is not installed here, so write the same header by hand.
bf = values("float32", (2, 3)).view(np.uint32) >> 16  # exact: the values need no rounding
with open(path("bfloat16_2x3.npy"), "wb") as f:
    npformat._write_array_header(f, {"descr": "<V2", "fortran_order": False, "shape": (2, 3)})
    f.write(bf.astype("<u2").tobytes())

# Big-endian data.
np.save(path("be_float32_2x3.npy"), values("float32", (2, 3)).astype(">f4"))
np.save(path("be_int64_2x3.npy"), values("int64", (2, 3)).astype(">i8"))
np.save(path("be_uint16_2x3.npy"), values("uint16", (2, 3)).astype(">u2"))
np.save(path("be_float16_2x3.npy"), values("float16", (2, 3)).astype(">f2"))
np.save(path("be_float64_2x3x4.npy"), values("float64", (2, 3, 4)).astype(">f8"))

# Fortran order.
np.save(path("f_float32_2x3.npy"), np.asfortranarray(values("float32", (2, 3))))
np.save(path("f_int32_2x3x4.npy"), np.asfortranarray(values("int32", (2, 3, 4))))
np.save(path("f_be_float64_3x2.npy"), np.asfortranarray(values("float64", (3, 2)).astype(">f8")))

# Format versions 2.0 and 3.0.
with open(path("v2_float32_2x3.npy"), "wb") as f:
    npformat.write_array(f, values("float32", (2, 3)), version=(2, 0))
with open(path("v3_int8_2x3.npy"), "wb") as f:
    npformat.write_array(f, values("int8", (2, 3)), version=(3, 0))

# Extreme values.
np.save(path("extremes_int64.npy"), np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max, 0]))
np.save(path("extremes_uint64.npy"), np.array([0, np.iinfo(np.uint64).max], np.uint64))
np.save(path("extremes_float32.npy"), np.array([np.nan, np.inf, -np.inf, -0.0, 1e-45], np.float32))

# Unsupported dtypes (jnp::load must refuse them with an IOError).
np.save(path("complex64_2.npy"), np.array([1 + 2j, 3], np.complex64))
np.save(path("str_2.npy"), np.array(["ab", "c"]))
np.save(path("structured_2.npy"), np.zeros(2, dtype=[("a", "<i4"), ("b", "<f8")]))

# .npz archives.
arrays = dict(a=values("float32", (2, 3)), b=values("int64", (5,)), c=np.array(True),
              d=values("float16", (0, 4)))
np.savez(path("savez.npz"), **arrays)
np.savez_compressed(path("savez_compressed.npz"), **arrays)
np.savez(path("savez_positional.npz"), values("int32", (3,)), values("uint8", (2, 2)))
big = np.zeros(1000000, np.float32)
big[::997] = 0.5
np.savez_compressed(path("savez_compressed_big.npz"), big=big, small=values("float64", (2, 3)))
# Archives past 4 GiB get zip64 central-directory records; lower zipfile's limits so that a
# small archive gets them too (NumPy always writes zip64 extras in the local headers).
saved = zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT
zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT = 16, 1
try:
    np.savez(path("savez_zip64.npz"), **arrays)
    np.savez_compressed(path("savez_compressed_zip64.npz"), **arrays)
finally:
    zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT = saved

print("wrote", len(os.listdir(OUT)), "files to", os.path.normpath(OUT))
