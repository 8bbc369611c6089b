#!/usr/bin/python3
"""Writes tests/golden/reductions_golden.inc: NumPy reference values for the jnp reductions,
statistics, cumulative ops and sorts (tests/numpy/reductions_test.cpp).

Values come from NumPy (computed in float64 from the float32-rounded inputs); the expected
result dtypes are JAX's (x32 mode: sums of small ints in int32, means of ints in float32,
...), written by hand below because NumPy's own defaults are 64-bit.

Run: /usr/bin/python3 tests/golden/gen_reductions.py
"""
import math
import os

import numpy as np

rng = np.random.default_rng(20240611)
cases = []


def fmt(v):
    v = float(v)
    if math.isnan(v):
        return "NAN"
    if math.isinf(v):
        return "INFINITY" if v > 0 else "-INFINITY"
    return repr(v)


def add(op, x, in_dtype, expected, out_dtype, axis=None, keepdims=False, ddof=0, q=0.0):
    x = np.asarray(x)
    expected = np.asarray(expected)
    if axis is None:
        axes, none = [], True
    elif isinstance(axis, int):
        axes, none = [axis], False
    else:
        axes, none = list(axis), False
    cases.append(dict(op=op, in_dtype=in_dtype, shape=list(x.shape),
                      x=[fmt(v) for v in x.astype(np.float64).ravel()], axes=axes, none=none,
                      keepdims=keepdims, ddof=ddof, q=q, out_dtype=out_dtype,
                      out_shape=list(expected.shape),
                      expected=[fmt(v) for v in expected.astype(np.float64).ravel()]))


def f32(shape, lo=-3, hi=3):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def ints(shape, lo=-5, hi=6):
    return rng.integers(lo, hi, size=shape)


# ---- sum / prod / mean / max / min over axis variants, float32 ----
x3 = f32((2, 3, 4))
x64 = x3.astype(np.float64)
for axis in [None, 0, 1, 2, -1, (0, 2), (2, 0), (0, 1, 2)]:
    for keepdims in [False, True]:
        add("sum", x3, "float32", np.sum(x64, axis=axis, keepdims=keepdims), "float32", axis, keepdims)
        add("mean", x3, "float32", np.mean(x64, axis=axis, keepdims=keepdims), "float32", axis, keepdims)
        add("max", x3, "float32", np.max(x64, axis=axis, keepdims=keepdims), "float32", axis, keepdims)
        add("min", x3, "float32", np.min(x64, axis=axis, keepdims=keepdims), "float32", axis, keepdims)
    add("prod", x3, "float32", np.prod(x64, axis=axis), "float32", axis)
    add("ptp", x3, "float32", np.ptp(x64, axis=axis), "float32", axis)
    for ddof in [0, 1]:
        add("var", x3, "float32", np.var(x64, axis=axis, ddof=ddof), "float32", axis, False, ddof)
        add("std", x3, "float32", np.std(x64, axis=axis, ddof=ddof), "float32", axis, False, ddof)

# ---- integer and bool inputs: JAX's result dtypes ----
i2 = ints((3, 5))
for dt, sum_dt in [("int8", "int32"), ("int16", "int32"), ("int32", "int32"), ("int64", "int64")]:
    add("sum", i2, dt, np.sum(i2, axis=1), sum_dt, 1)
    add("prod", i2, dt, np.prod(i2, axis=0), sum_dt, 0)
    add("max", i2, dt, np.max(i2, axis=0), dt, 0)
    add("mean", i2, dt, np.mean(i2.astype(np.float64), axis=1), "float32", 1)
    add("var", i2, dt, np.var(i2.astype(np.float64)), "float32", None)
    add("cumsum", i2, dt, np.cumsum(i2, axis=1), dt, 1)
u2 = ints((3, 5), 0, 9)
for dt, sum_dt in [("uint8", "uint32"), ("uint16", "uint32"), ("uint32", "uint32")]:
    add("sum", u2, dt, np.sum(u2, axis=0), sum_dt, 0)
    add("min", u2, dt, np.min(u2), dt, None)
b2 = rng.integers(0, 2, size=(3, 4)).astype(bool)
add("sum", b2, "bool", np.sum(b2, axis=1), "int32", 1)
add("sum", b2, "bool", np.sum(b2), "int32", None)
add("all", b2, "bool", np.all(b2, axis=1), "bool", 1)
add("any", b2, "bool", np.any(b2, axis=0), "bool", 0)
add("all", b2, "bool", np.all(b2), "bool", None)
add("mean", b2, "bool", np.mean(b2, axis=0), "float32", 0)
add("cumsum", b2, "bool", np.cumsum(b2, axis=1), "int32", 1)
add("max", b2, "bool", np.max(b2, axis=0), "bool", 0)
add("count_nonzero", i2, "int32", np.count_nonzero(i2, axis=1), "int32", 1)
add("count_nonzero", x3, "float32", np.count_nonzero(x3), "int32", None)
xa = np.array([[0.0, 1.5, -2.0], [0.0, 0.0, 3.0]], dtype=np.float32)
add("all", xa, "float32", np.all(xa, axis=0), "bool", 0)
add("any", xa, "float32", np.any(xa, axis=1), "bool", 1)
add("sum", x3, "float16", np.sum(x3.astype(np.float16).astype(np.float64), axis=2), "float16", 2)

# ---- argmax / argmin: ties -> first; NaN -> first NaN ----
t = np.array([[1, 5, 5, 2], [7, 7, 0, 0], [3, 3, 3, 3]], dtype=np.float32)
for axis in [None, 0, 1, -1]:
    add("argmax", t, "float32", np.argmax(t, axis=axis), "int32", axis)
    add("argmin", t, "float32", np.argmin(t, axis=axis), "int32", axis)
add("argmax", t, "float32", np.argmax(t, axis=1, keepdims=True), "int32", 1, True)
tn = np.array([[1, np.nan, 5, np.nan], [2, 9, 9, 1]], dtype=np.float32)
add("argmax", tn, "float32", np.argmax(tn, axis=1), "int32", 1)
add("argmin", tn, "float32", np.argmin(tn, axis=1), "int32", 1)
add("argmax", i2, "int16", np.argmax(i2, axis=0), "int32", 0)

# ---- NaN propagation and the nan* family ----
xn = f32((3, 4))
xn[0, 1] = np.nan
xn[2, :] = np.nan
xn64 = xn.astype(np.float64)
with np.errstate(all="ignore"):
    import warnings
    warnings.simplefilter("ignore")
    for axis in [None, 0, 1]:
        add("sum", xn, "float32", np.sum(xn64, axis=axis), "float32", axis)
        add("max", xn, "float32", np.max(xn64, axis=axis), "float32", axis)
        add("nansum", xn, "float32", np.nansum(xn64, axis=axis), "float32", axis)
        add("nanprod", xn, "float32", np.nanprod(xn64, axis=axis), "float32", axis)
        add("nanmax", xn, "float32", np.nanmax(xn64, axis=axis), "float32", axis)
        add("nanmin", xn, "float32", np.nanmin(xn64, axis=axis), "float32", axis)
        add("nanmean", xn, "float32", np.nanmean(xn64, axis=axis), "float32", axis)
        for ddof in [0, 1]:
            add("nanvar", xn, "float32", np.nanvar(xn64, axis=axis, ddof=ddof), "float32", axis, False, ddof)
            add("nanstd", xn, "float32", np.nanstd(xn64, axis=axis, ddof=ddof), "float32", axis, False, ddof)
        add("median", xn, "float32", np.median(xn64, axis=axis), "float32", axis)
    add("nancumsum", xn, "float32", np.nancumsum(xn64, axis=1), "float32", 1)
    add("nancumprod", xn, "float32", np.nancumprod(xn64, axis=0), "float32", 0)
    # ddof >= N gives NaN
    add("var", x3, "float32", np.full((3, 4), np.nan), "float32", 0, False, 2)

# ---- empty inputs ----
e = np.zeros((2, 0, 3), dtype=np.float32)
add("sum", e, "float32", np.sum(e, axis=1), "float32", 1)
add("sum", e, "float32", np.sum(e), "float32", None)
add("prod", e, "float32", np.prod(e, axis=(0, 1)), "float32", (0, 1))
add("max", e, "float32", np.max(e, axis=(0, 2)), "float32", (0, 2))
add("any", e, "float32", np.any(e, axis=1), "bool", 1)
add("all", e, "float32", np.all(e, axis=1), "bool", 1)
add("cumsum", e, "float32", np.cumsum(e, axis=1), "float32", 1)
add("sort", e, "float32", np.sort(e, axis=1), "float32", 1)
with np.errstate(all="ignore"):
    add("mean", e, "float32", np.mean(e, axis=1), "float32", 1)

# ---- cumulative ----
c = f32((3, 4), -1.5, 1.5)
c64 = c.astype(np.float64)
for axis in [None, 0, 1, -1]:
    add("cumsum", c, "float32", np.cumsum(c64, axis=axis), "float32", axis)
    add("cumprod", c, "float32", np.cumprod(c64, axis=axis), "float32", axis)
add("cumsum", np.array(7.0, dtype=np.float32), "float32", np.cumsum(np.array(7.0)), "float32", None)

# ---- quantiles ----
qx = f32((4, 5))
qx64 = qx.astype(np.float64)
for axis in [None, 0, 1]:
    for q in [0.0, 0.3, 0.5, 1.0]:
        add("quantile", qx, "float32", np.quantile(qx64, q, axis=axis), "float32", axis, False, 0, q)
    add("percentile", qx, "float32", np.percentile(qx64, 75, axis=axis), "float32", axis, False, 0, 75.0)
    add("median", qx, "float32", np.median(qx64, axis=axis), "float32", axis)
add("median", qx, "float32", np.median(qx64, axis=1, keepdims=True), "float32", 1, True)
add("quantile", i2, "int32", np.quantile(i2.astype(np.float64), 0.25, axis=(0, 1)), "float32", (0, 1), False, 0, 0.25)

# ---- average with weights ----
w1 = rng.uniform(0.5, 2.0, size=(4,)).astype(np.float32)
ax = f32((3, 4))
add("average_w1", ax, "float32", np.average(ax.astype(np.float64), axis=1, weights=w1.astype(np.float64)),
    "float32", 1)
cases[-1]["weights"] = [fmt(v) for v in w1.astype(np.float64)]
add("average", ax, "float32", np.average(ax.astype(np.float64), axis=0), "float32", 0)

# ---- sorting ----
s = np.array([[3, 1, 2, 1, 5], [0, -1, 4, 4, 2], [9, 8, 7, 6, 5]], dtype=np.float32)
for axis in [None, 0, 1, -1]:
    add("sort", s, "float32", np.sort(s, axis=axis), "float32", axis)
    add("argsort", s, "float32", np.argsort(s, axis=axis, kind="stable"), "int32", axis)
sn = np.array([3, np.nan, 1, -np.inf, np.nan, 2, np.inf], dtype=np.float32)
add("sort", sn, "float32", np.sort(sn), "float32", 0)
add("argsort", sn, "float32", np.argsort(sn, kind="stable"), "int32", 0)
si = ints((4, 6), -3, 3)
add("sort", si, "int32", np.sort(si, axis=0), "int32", 0)
add("argsort", si, "int8", np.argsort(si, axis=1, kind="stable"), "int32", 1)
add("sort_desc", s, "float32", -np.sort(-s, axis=1), "float32", 1)
add("argsort_desc", si, "int32", np.argsort(-si, axis=1, kind="stable"), "int32", 1)
add("lexsort", si, "int32", np.lexsort([si[1], si[0]]), "int32", 0)  # primary key: row 0

lines = ["// Generated by tests/golden/gen_reductions.py with NumPy " + np.__version__ +
         ". Do not edit.", "// clang-format off"]
lines.append("const std::vector<GoldenCase> kGolden = {")
for cs in cases:
    lines.append("  {\"%s\", \"%s\", {%s}, {%s}, {%s}, %s, %s, %d, %s, \"%s\", {%s}, {%s}, {%s}}," % (
        cs["op"], cs["in_dtype"], ", ".join(map(str, cs["shape"])), ", ".join(cs["x"]),
        ", ".join(map(str, cs["axes"])), "true" if cs["none"] else "false",
        "true" if cs["keepdims"] else "false", cs["ddof"], repr(float(cs["q"])), cs["out_dtype"],
        ", ".join(map(str, cs["out_shape"])), ", ".join(cs["expected"]),
        ", ".join(cs.get("weights", []))))
lines.append("};")
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reductions_golden.inc")
with open(out, "w") as f:
    f.write("\n".join(lines) + "\n")
print("wrote", len(cases), "cases to", out)
