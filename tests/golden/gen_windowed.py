#!/usr/bin/python3
"""Writes tests/golden/windowed_golden.inc: PyTorch (float64) reference values for the
windowed reductions (tests/ops/windowed_test.cpp), as NamedGolden rows.

Each case writes its inputs ("<case>/x", and "<case>/g" for a cotangent) and its expected
outputs. Pooling goes through torch.nn.functional.{max,avg}_pool{1,2,3}d on NC... tensors;
what PyTorch pooling has no argument for is built around it with plain tensor ops:
asymmetric padding (F.pad with -inf or 0), base dilation (elements spread into a tensor of
-inf or 0), NHWC layouts (permute), min pooling (-max_pool(-x)). Average pooling follows
Flax's avg_pool: the window sum divided by the window size (count_include_pad=True) or by
the window sum of ones (False), which PyTorch's count_include_pad computes the same way.
Inputs are distinct random values, so max/min have no ties.

Run: /usr/bin/python3 tests/golden/gen_windowed.py
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(20261201)
rows = []


def fmt(v):
    v = float(v)
    if math.isinf(v):
        return "INFINITY" if v > 0 else "-INFINITY"
    return repr(v)


def add(name, t):
    a = t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
    rows.append((name, list(a.shape), [fmt(v) for v in a.astype(np.float64).ravel()]))


def rand(shape):
    # Distinct values (a permutation of a grid plus noise), so no window has a tie.
    n = int(np.prod(shape))
    v = rng.permutation(n).astype(np.float64) / n * 4.0 - 2.0 + rng.uniform(0, 1e-3, n)
    return torch.tensor(v.reshape(shape))


POOL = {1: (F.max_pool1d, F.avg_pool1d), 2: (F.max_pool2d, F.avg_pool2d), 3: (F.max_pool3d, F.avg_pool3d)}


def maxpool_case(name, shape, k, s, p, d=1, grad=True):
    x = rand(shape).requires_grad_(True)
    nd = len(shape) - 2
    y = POOL[nd][0](x, k, s, p, d)
    add(name + "/x", x)
    add(name + "/max", y)
    add(name + "/min", -POOL[nd][0](-x, k, s, p, d))
    if grad:
        g = rand(tuple(y.shape))
        (gx,) = torch.autograd.grad(y, x, g)
        add(name + "/g", g)
        add(name + "/max_grad", gx)


def avgpool_case(name, shape, k, s, p):
    x = rand(shape)
    nd = len(shape) - 2
    add(name + "/x", x)
    add(name + "/avg_incl", POOL[nd][1](x, k, s, p, count_include_pad=True))
    add(name + "/avg_excl", POOL[nd][1](x, k, s, p, count_include_pad=False))
    ks = k if isinstance(k, tuple) else (k,) * nd
    add(name + "/sum", POOL[nd][1](x, k, s, p, count_include_pad=True) * math.prod(ks))


maxpool_case("max2d_k2s2", (2, 3, 6, 6), 2, 2, 0)
maxpool_case("max2d_k3s2p1", (2, 3, 7, 7), 3, 2, 1)
maxpool_case("max2d_k3s1p1_dil2", (1, 2, 9, 8), 3, 1, 1, 2, grad=False)
maxpool_case("max2d_k2s1", (1, 2, 5, 4), 2, 1, 0)
maxpool_case("max1d_k3s2p1", (2, 3, 11), 3, 2, 1)
maxpool_case("max3d", (1, 2, 5, 6, 4), (2, 3, 2), (2, 1, 2), (1, 1, 0))
avgpool_case("avg2d_k3s2p1", (2, 3, 7, 7), 3, 2, 1)
avgpool_case("avg2d_k2s2", (2, 2, 6, 5), 2, 2, 0)
avgpool_case("avg1d_k4s3p2", (2, 3, 10), 4, 3, 2)
avgpool_case("avg3d", (1, 2, 4, 5, 6), (2, 2, 3), (1, 2, 2), (1, 0, 1))


def dilate(x, base, fill):
    """x spread by `base` per dim, holes = fill (XLA's base dilation)."""
    shape = [0 if n == 0 else 1 + b * (n - 1) for n, b in zip(x.shape, base)]
    out = torch.full(shape, fill)
    out[tuple(slice(None, None, b) for b in base)] = x
    return out


def general_case(name, shape, window, strides, padding, base, wdil, nhwc=False):
    """reduce_window_{max,min,sum} over 2 spatial dims of a 4-D operand (NCHW, or NHWC
    when nhwc), with asymmetric padding and base/window dilation."""
    x = rand(shape)
    add(name + "/x", x)
    xt = x.permute(0, 3, 1, 2) if nhwc else x  # to NCHW
    sp = (1, 2) if nhwc else (2, 3)
    k = tuple(window[i] for i in sp)
    s = tuple(strides[i] for i in sp)
    pads = [padding[i] for i in sp]
    b = tuple(base[i] for i in sp)
    wd = tuple(wdil[i] for i in sp)
    fpad = (pads[1][0], pads[1][1], pads[0][0], pads[0][1])  # F.pad: last dim first
    outs = {}
    for op, fill in (("max", -math.inf), ("min", math.inf), ("sum", 0.0)):
        sign = -1.0 if op == "min" else 1.0
        v = dilate(sign * xt, (1, 1) + b, -math.inf if op != "sum" else 0.0)
        v = F.pad(v, fpad, value=-math.inf if op != "sum" else 0.0)
        if op == "sum":
            y = F.avg_pool2d(v, k, s, 0, count_include_pad=True) * math.prod(k) if wd == (1, 1) else None
            if y is None:  # window dilation: sum the dilated taps by hand
                oh = (v.shape[2] - (1 + wd[0] * (k[0] - 1))) // s[0] + 1
                ow = (v.shape[3] - (1 + wd[1] * (k[1] - 1))) // s[1] + 1
                y = torch.zeros(v.shape[0], v.shape[1], oh, ow)
                for i in range(k[0]):
                    for j in range(k[1]):
                        y += v[:, :, i * wd[0]::s[0], j * wd[1]::s[1]][:, :, :oh, :ow]
        else:
            y = sign * F.max_pool2d(v, k, s, 0, wd)
        outs[op] = y.permute(0, 2, 3, 1) if nhwc else y
    for op in ("max", "min", "sum"):
        add(name + "/" + op, outs[op])


general_case("general_nchw", (2, 2, 5, 4), (1, 1, 2, 3), (1, 1, 1, 2), ((0, 0), (0, 0), (1, 0), (2, 1)),
             (1, 1, 2, 1), (1, 1, 1, 1))
general_case("general_nhwc", (2, 5, 4, 3), (1, 2, 2, 1), (1, 2, 1, 1), ((0, 0), (1, 1), (0, 1), (0, 0)),
             (1, 2, 1, 1), (1, 1, 2, 1), nhwc=True)
general_case("general_wdil", (1, 2, 7, 6), (1, 1, 3, 2), (1, 1, 2, 1), ((0, 0), (0, 0), (2, 0), (0, 3)),
             (1, 1, 1, 2), (1, 1, 2, 3))

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "windowed_golden.inc"), "w") as f:
    f.write(f"// Generated by tests/golden/gen_windowed.py with PyTorch {torch.__version__}. Do not edit.\n")
    f.write("// clang-format off\n")
    f.write("static const std::vector<jx::testing::NamedGolden> kWindowedGolden = {\n")
    for name, shape, vals in rows:
        f.write(f'  {{"{name}", {{{", ".join(str(s) for s in shape)}}}, {{{", ".join(vals)}}}}},\n')
    f.write("};\n")
print(f"wrote {len(rows)} rows")
