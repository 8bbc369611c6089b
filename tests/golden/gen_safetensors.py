#!/usr/bin/python3
"""Writes tests/data/io/golden.safetensors by the safetensors spec, with struct and json only
(NumPy 1.24, no safetensors package).

Run with /usr/bin/python3:  /usr/bin/python3 tests/golden/gen_safetensors.py
tests/io/safetensors_test.cpp reads it and checks every value. Element i of an n-element tensor
(C order) is gen_io.py's formula:
  signed ints: 3*i - 7;  unsigned ints: 7*i;  floats (and bfloat16): 0.5*i - 1.25;  bool: i % 3 == 0
Tensors are named after their dtype ("F32", ...), plus "scalar_F64" (shape []) and "empty_I32"
(shape [0, 3]). The data is laid out in reverse name order, so offsets do not follow the
header's key order, and the header is json.dumps' default (with spaces), padded to 8 bytes.
"""
import json
import os
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "io")
os.makedirs(OUT, exist_ok=True)

# safetensors name -> (numpy dtype, shape); BF16 is stored as the top 16 bits of float32.
TENSORS = {
    "BOOL": ("bool", [2, 3]),
    "U8": ("uint8", [5]),
    "I8": ("int8", [2, 2]),
    "I16": ("int16", [3, 1]),
    "U16": ("uint16", [4]),
    "I32": ("int32", [2, 3]),
    "U32": ("uint32", [3]),
    "I64": ("int64", [2, 2]),
    "U64": ("uint64", [2]),
    "F16": ("float16", [2, 3]),
    "BF16": ("bfloat16", [7]),
    "F32": ("float32", [2, 3, 2]),
    "F64": ("float64", [3]),
    "scalar_F64": ("float64", []),
    "empty_I32": ("int32", [0, 3]),
}


def values(dtype, shape):
    n = int(np.prod(shape)) if shape else 1
    i = np.arange(n)
    if dtype == "bfloat16":
        f = (0.5 * i - 1.25).astype("<f4")
        return (f.view("<u4") >> 16).astype("<u2").reshape(shape)
    dt = np.dtype(dtype).newbyteorder("<")
    if dt.kind == "b":
        v = i % 3 == 0
    elif dt.kind == "i":
        v = 3 * i - 7
    elif dt.kind == "u":
        v = 7 * i
    else:
        v = 0.5 * i - 1.25
    return v.astype(dt).reshape(shape)


def main():
    header = {"__metadata__": {"format": "pt", "note": "quote \" backslash \\ tab\t é ✓"}}
    data = b""
    for name in sorted(TENSORS, reverse=True):
        dtype, shape = TENSORS[name]
        raw = values(dtype, shape).tobytes()
        header[name] = {"dtype": name.split("_")[-1], "shape": shape,
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode("utf-8")  # ensure_ascii: the non-ASCII as \\u escapes
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(os.path.join(OUT, "golden.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


if __name__ == "__main__":
    main()
