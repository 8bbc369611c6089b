#!/usr/bin/python3
"""Reads a jx checkpoint directory with NumPy, json and struct only (no jx, no safetensors
package): checks that tree.json and arrays.safetensors agree, then writes every array as
<out>/<k>.npy (bfloat16 as its uint16 bits) and <out>/manifest.txt with one line per leaf:
"<k> <name> <dtype> <shape>". Used by tests/checkpoint/interop_test.cpp.
Usage: read_checkpoint_numpy.py CHECKPOINT_DIR OUT_DIR
"""
import json
import os
import struct
import sys

import numpy as np

ST = {"BOOL": "?", "U8": "<u1", "I8": "<i1", "I16": "<i2", "U16": "<u2", "I32": "<i4", "U32": "<u4",
      "I64": "<i8", "U64": "<u8", "F16": "<f2", "BF16": "<u2", "F32": "<f4", "F64": "<f8",
      "C64": "<c8", "C128": "<c16"}

def main(ckpt, out):
    with open(os.path.join(ckpt, "arrays.safetensors"), "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    with open(os.path.join(ckpt, "tree.json")) as f:
        desc = json.load(f)
    assert desc["format"] == "jx.checkpoint" and desc["version"] == 1, desc.get("format")
    leaves = []
    def walk(node):
        (kind, body), = [(k, node[k]) for k in ("array", "dict", "struct", "list", "tuple", "none", "static") if k in node]
        if kind == "array":
            leaves.append(node)
        elif kind in ("dict",):
            for v in body.values(): walk(v)
        elif kind == "struct":
            for v in node["fields"].values(): walk(v)
        elif kind in ("list", "tuple"):
            for v in body: walk(v)
    walk(desc["tree"])
    names = [k for k in header if k != "__metadata__"]
    assert sorted(names) == sorted(l["array"] for l in leaves), (names, leaves)
    os.makedirs(out, exist_ok=True)
    lines = []
    for k, l in enumerate(leaves):
        h = header[l["array"]]
        assert h["shape"] == l["shape"], (h, l)
        b, e = h["data_offsets"]
        a = np.frombuffer(data[b:e], dtype=ST[h["dtype"]]).reshape(h["shape"])
        np.save(os.path.join(out, "%d.npy" % k), a)
        lines.append("%d %s %s %s" % (k, l["array"], l["dtype"], ",".join(map(str, l["shape"]))))
    with open(os.path.join(out, "manifest.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")

if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
