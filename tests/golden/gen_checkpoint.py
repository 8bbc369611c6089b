#!/usr/bin/python3
"""Writes tests/data/checkpoint/python_ckpt: a jx checkpoint directory made by the format's
spec (docs/checkpoint.md) with NumPy, json and struct only, so that a test can check that jx
restores a checkpoint it did not write. Values follow formulas the test recomputes:
  params/Dense_0/kernel  float32 [3,2]   0.25*i - 0.5
  params/Dense_0/bias    float16 [2]     i + 0.5
  params/emb             bfloat16 [2,2]  bits of float32 (i - 1.5), truncated
  opt_state/0/count      int32 []        7
  opt_state/0/mu         float64 [0]     (empty)
  opt_state/1            None
  mask                   bool [4]        i % 2 == 0
  ids                    uint64 [2]      2**63 + i
  epoch                  static int 3;  name  static string "mlp";  lr  static float 0.001
Run: /usr/bin/python3 tests/golden/gen_checkpoint.py
"""
import json
import os
import struct

import numpy as np

OUT = os.path.join(os.path.dirname(__file__), "..", "data", "checkpoint", "python_ckpt")

def bf16(x):
    return (np.asarray(x, np.float32).view(np.uint32) >> 16).astype(np.uint16)

arrays = [  # (name, safetensors dtype, jx dtype, numpy array of the stored bytes)
    ("params/Dense_0/kernel", "F32", "float32", (0.25 * np.arange(6) - 0.5).astype(np.float32).reshape(3, 2)),
    ("params/Dense_0/bias", "F16", "float16", (np.arange(2) + 0.5).astype(np.float16)),
    ("params/emb", "BF16", "bfloat16", bf16(np.arange(4) - 1.5).reshape(2, 2)),
    ("opt_state/0/count", "I32", "int32", np.array(7, np.int32)),
    ("opt_state/0/mu", "F64", "float64", np.zeros((0,), np.float64)),
    ("mask", "BOOL", "bool", (np.arange(4) % 2 == 0)),
    ("ids", "U64", "uint64", (np.uint64(2**63) + np.arange(2, dtype=np.uint64))),
]

def leaf(name):
    for n, _, jdt, a in arrays:
        if n == name:
            return {"array": n, "dtype": jdt, "shape": list(a.shape)}
    raise KeyError(name)

tree = {"dict": {
    "epoch": {"static": "int", "value": 3},
    "ids": leaf("ids"),
    "lr": {"static": "float", "value": 0.001},
    "mask": leaf("mask"),
    "name": {"static": "string", "value": "mlp"},
    "opt_state": {"tuple": [
        {"dict": {"count": leaf("opt_state/0/count"), "mu": leaf("opt_state/0/mu")}},
        {"none": None},
    ]},
    "params": {"dict": {
        "Dense_0": {"dict": {"bias": leaf("params/Dense_0/bias"), "kernel": leaf("params/Dense_0/kernel")}},
        "emb": leaf("params/emb"),
    }},
}}

os.makedirs(OUT, exist_ok=True)
with open(os.path.join(OUT, "tree.json"), "w") as f:
    json.dump({"format": "jx.checkpoint", "version": 1, "tree": tree}, f, indent=1)

# safetensors, by its spec: tensors in a different order than the tree, to show names matter.
header, blobs, offset = {"__metadata__": {"format": "jx.checkpoint", "version": "1"}}, [], 0
for name, st, _, a in reversed(arrays):
    b = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes()
    header[name] = {"dtype": st, "shape": list(a.shape), "data_offsets": [offset, offset + len(b)]}
    blobs.append(b)
    offset += len(b)
h = json.dumps(header, separators=(",", ":")).encode()
h += b" " * ((8 - len(h) % 8) % 8)
with open(os.path.join(OUT, "arrays.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
