#!/usr/bin/python3
"""Writes tests/golden/complex_order_golden.inc: the order of complex numbers (max/min,
comparisons, max/min reductions, argmax/argmin, sort/argsort) for
tests/numpy/complex_order_test.cpp.

Run with /usr/bin/python3 (NumPy 1.24) from the repository root:
    /usr/bin/python3 tests/golden/gen_complex_order.py

JAX orders complex numbers lexicographically by (real, imag), as NumPy does, but it treats
NaN differently. Every value below is computed with NumPy; where JAX's rule is not NumPy's
the JAX rule is written out here in NumPy, and checked against NumPy's own function on the
inputs where the two agree:
  - lax.max / lax.min (jax/_src/interpreters/mlir.py, _minmax_hlo):
    select(re(x) == re(y) ? im(x) > im(y) : re(x) > re(y), x, y). No NaN propagation;
    NumPy's maximum returns the NaN operand.
  - jnp.less etc. (jax/_src/numpy/ufuncs.py, _complex_comparison):
    select(re(x) == re(y), op(im(x), im(y)), op(re(x), re(y))). NumPy's comparisons are
    false whenever a part is NaN.
  - reduce_max / reduce_min (lax.py, _unary_reduce_lower with mlir.max_hlo and
    _get_max_identity): a fold of lax.max from -inf + 0j (min: lax.min from +inf + 0j), in
    XLA's CPU order (row-major). NumPy's max returns the first NaN.
  - nanmax / nanmin (reductions.py, _nan_reduction): NaN elements (either part) replaced
    by -inf + 0j (+inf + 0j), the fold above, NaN + 0j where every element was NaN.
  - argmax / argmin: NumPy's (the first value with a NaN part wins, else the first
    lexicographic extreme); JAX's reducer (lax.py, _ArgMinMaxReducer) picks the same
    elements given a lexicographic comparison, but its lax.gt rejects complex operands.
  - sort / argsort (lax.py, _sort_lt_comparator and _operands_to_keys): stable, by
    (real, imag) with each part's -0.0 equal to +0.0 and NaN after every number: np.lexsort
    on (imag, real), which orders floats that way. NumPy's complex sort instead puts
    R + nan*j after every R + R*j ("[R + Rj, R + nanj, nan + Rj, nan + nanj]").
"""
import math
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "complex_order_golden.inc")

nan, inf = float("nan"), float("inf")

# Pairs: equal real parts (the imaginary parts decide), exact ties, signed zeros in either
# part, NaN in either part on either side, infinities.
X = [complex(1, 2), complex(1, -1), complex(-0.0, 1), complex(0.0, 1), complex(0.0, -0.0),
     complex(nan, 1), complex(2, nan), complex(inf, 0), complex(-inf, 5), complex(1, inf),
     complex(3, -inf), complex(-2, 0.5), complex(0.5, 0.5), complex(4, 1)]
Y = [complex(1, 3), complex(1, -1), complex(0.0, 1), complex(-0.0, 1), complex(0.0, 0.0),
     complex(0, 0), complex(2, 1), complex(inf, -1), complex(-inf, 5), complex(1, nan),
     complex(nan, nan), complex(-2, 0.25), complex(nan, 0.5), complex(3, 7)]

# Rows of a [4, 5] matrix: ties in the real part, signed zeros, infinities, NaN in a
# middle position (lost by JAX's fold) and in the last one (kept).
M = [[complex(1, 2), complex(1, 5), complex(-1, 9), complex(1, 5), complex(0, 0)],
     [complex(2, -1), complex(nan, 0), complex(3, 0), complex(-0.0, 1), complex(3, -2)],
     [complex(-inf, -1), complex(-inf, -2), complex(2, nan), complex(inf, 1), complex(1, nan)],
     [complex(0.5, 0), complex(0.5, -0.0), complex(-3, 4), complex(0.25, 1), complex(nan, nan)]]

# A row to sort with every kind of key: duplicates (a stable sort keeps their order),
# signed zeros (equal keys), NaN in either part, infinities.
S = [complex(2, 1), complex(nan, 1), complex(1, nan), complex(-0.0, 0), complex(0.0, -0.0),
     complex(1, 2), complex(-inf, 3), complex(2, 1), complex(nan, nan), complex(1, -inf),
     complex(nan, -1), complex(0.0, 0.0), complex(3, 0), complex(inf, -inf)]


def lit(v):
    v = float(v)
    if math.isnan(v):
        return "NAN"
    if math.isinf(v):
        return "INFINITY" if v > 0 else "-INFINITY"
    return repr(v)


def cvec(a):
    a = np.asarray(a, np.complex128).ravel()
    return "{" + ", ".join("{%s, %s}" % (lit(v.real), lit(v.imag)) for v in a) + "}"


def bvec(a):
    return "{" + ", ".join("true" if b else "false" for b in np.asarray(a).ravel()) + "}"


def ivec(a):
    return "{" + ", ".join(str(int(i)) for i in np.asarray(a).ravel()) + "}"


def has_nan(z):
    return np.isnan(z.real) | np.isnan(z.imag)


def lax_max(x, y, greater=True):
    """lax.max (lax.min when not greater) on complex, elementwise."""
    x, y = np.broadcast_arrays(np.asarray(x), np.asarray(y))
    op = np.greater if greater else np.less
    with np.errstate(invalid="ignore"):
        pick_x = np.where(x.real == y.real, op(x.imag, y.imag), op(x.real, y.real))
    return np.where(pick_x, x, y)


def jnp_compare(op, x, y):
    with np.errstate(invalid="ignore"):
        return np.where(x.real == y.real, op(x.imag, y.imag), op(x.real, y.real))


def reduce_fold(a, axis, greater=True):
    """XLA's reduce of lax.max (lax.min) from -inf + 0j (+inf + 0j), in row-major order."""
    a = np.moveaxis(np.asarray(a), axis, -1) if axis is not None else np.asarray(a).reshape(1, -1)
    init = complex(-inf, 0) if greater else complex(inf, 0)
    out = np.empty(a.shape[:-1], np.complex128)
    for idx in np.ndindex(out.shape):
        acc = np.complex128(init)
        for v in a[idx]:
            acc = lax_max(acc, v, greater)[()]
        out[idx] = acc
    return out


def jax_argsort(a, axis):
    """lax.sort's stable order on (real, imag) with -0.0 == +0.0 and NaN last."""
    return np.lexsort((a.imag, a.real), axis=axis)


def main():
    x, y = np.array(X), np.array(Y)
    m = np.array(M)
    s = np.array(S)
    lines = ["// Generated by tests/golden/gen_complex_order.py from NumPy " + np.__version__ + ". Do not edit.",
             "// clang-format off",
             "using C = std::complex<double>;",
             f"const std::vector<C> kX = {cvec(x)};",
             f"const std::vector<C> kY = {cvec(y)};",
             f"const std::vector<C> kM = {cvec(m)};  // [4, 5]",
             f"const std::vector<C> kS = {cvec(s)};"]

    # Elementwise max/min: JAX's select; NumPy's maximum agrees where neither has a NaN.
    mx, mn = lax_max(x, y), lax_max(x, y, greater=False)
    ok = ~has_nan(x) & ~has_nan(y)
    assert (mx[ok] == np.maximum(x, y)[ok]).all() and (mn[ok] == np.minimum(x, y)[ok]).all()
    lines.append(f"const std::vector<C> kMax = {cvec(mx)};")
    lines.append(f"const std::vector<C> kMin = {cvec(mn)};")
    lines.append(f"const std::vector<C> kMaxYX = {cvec(lax_max(y, x))};  // max(y, x): the order matters with NaN")

    # Comparisons: JAX's _complex_comparison; NumPy's agree without NaN.
    for name, op, npop in [("Less", np.less, np.less), ("LessEqual", np.less_equal, np.less_equal),
                           ("Greater", np.greater, np.greater),
                           ("GreaterEqual", np.greater_equal, np.greater_equal)]:
        got = jnp_compare(op, x, y)
        with np.errstate(invalid="ignore"):
            assert (got[ok] == npop(x, y)[ok]).all(), name
        lines.append(f"const std::vector<bool> k{name} = {bvec(got)};")

    # fmax/fmin: JAX's where(greater(x, y) | isnan(y), x, y) (fmin with less).
    with np.errstate(invalid="ignore"):
        fmx = np.where(jnp_compare(np.greater, x, y) | has_nan(y), x, y)
        fmn = np.where(jnp_compare(np.less, x, y) | has_nan(y), x, y)
    assert (fmx[ok] == np.fmax(x, y)[ok]).all() and (fmn[ok] == np.fmin(x, y)[ok]).all()
    lines.append(f"const std::vector<C> kFmax = {cvec(fmx)};")
    lines.append(f"const std::vector<C> kFmin = {cvec(fmn)};")

    # Reductions of M: JAX's fold; NumPy's max agrees on the NaN-free rows and columns.
    red = {}
    for name, axis in [("Axis0", 0), ("Axis1", 1), ("All", None)]:
        for kind, greater, npf in [("Max", True, np.max), ("Min", False, np.min)]:
            got = reduce_fold(m, axis, greater)
            want = npf(m, axis=axis)
            clean = ~has_nan(m).any(axis=axis)
            assert (np.ravel(got)[np.ravel(clean)] == np.ravel(want)[np.ravel(clean)]).all(), (kind, axis)
            red[kind + name] = got
            lines.append(f"const std::vector<C> kReduce{kind}{name} = {cvec(got)};")
    # One element below the identity: -inf - 1j. XLA keeps a lone element (its simplifier
    # turns the one-element reduce into a reshape) but folds two from -inf + 0j.
    lone = np.array([complex(-inf, -1)])
    lines.append(f"const std::vector<C> kLone = {cvec(lone)};")
    lines.append(f"const std::vector<C> kLoneMax = {cvec(lone)};")
    lines.append(f"const std::vector<C> kTwoLoneMax = {cvec(reduce_fold(np.concatenate([lone, lone]), 0))};")

    # nanmax/nanmin: JAX's _nan_reduction: NaN elements (either part) replaced by the
    # identity, then the fold; NaN + 0j where every element was NaN.
    for kind, greater, fill in [("Max", True, complex(-inf, 0)), ("Min", False, complex(inf, 0))]:
        filled = np.where(has_nan(m), fill, m)
        for name, axis in [("Axis1", 1), ("All", None)]:
            got = reduce_fold(filled, axis, greater)
            allnan = has_nan(m).all(axis=axis)
            got = np.where(allnan, complex(nan, 0), got)
            lines.append(f"const std::vector<C> kNan{kind}{name} = {cvec(got)};")

    # argmax/argmin: NumPy's own.
    for name, axis in [("Axis0", 0), ("Axis1", 1), ("All", None)]:
        lines.append(f"const std::vector<int> kArgmax{name} = {ivec(np.argmax(m, axis=axis))};")
        lines.append(f"const std::vector<int> kArgmin{name} = {ivec(np.argmin(m, axis=axis))};")
    lines.append(f"const std::vector<int> kArgmaxX = {ivec([np.argmax(x)])};")
    lines.append(f"const std::vector<int> kArgminX = {ivec([np.argmin(x)])};")

    # sort/argsort: JAX's order; NumPy's stable argsort agrees on keys with no NaN part.
    for a in (s, m.ravel()):
        clean = a[~has_nan(a)]
        assert (jax_argsort(clean, -1) == np.argsort(clean, kind="stable")).all()
    idx = jax_argsort(s, -1)
    lines.append(f"const std::vector<int> kArgsortS = {ivec(idx)};")
    lines.append(f"const std::vector<C> kSortS = {cvec(s[idx])};")
    lines.append(f"const std::vector<C> kNumpySortS = {cvec(np.sort(s))};  // where NumPy differs")
    for name, axis in [("Axis1", 1), ("Axis0", 0)]:
        idx = jax_argsort(m, axis)
        lines.append(f"const std::vector<int> kArgsortM{name} = {ivec(idx)};")
        lines.append(f"const std::vector<C> kSortM{name} = {cvec(np.take_along_axis(m, idx, axis))};")
    lines.append("")
    with open(OUT, "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
