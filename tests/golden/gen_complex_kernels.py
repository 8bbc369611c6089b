#!/usr/bin/python3
"""Writes tests/golden/complex_kernels_golden.inc: NumPy's complex64/complex128 results for
tests/ops/complex_kernels_test.cpp (the CPU kernels called directly).

Regular cases ("edge" false) are the exact answer for the given inputs as closely as this
script can get it: complex64 inputs are evaluated in complex128 (and the values written as
double), so that the test measures the kernel's error, not NumPy's float32 one. log1p and
expm1 use formulas free of cancellation (NumPy's complex log1p is log|1+z|, which loses
the small digits): exact rational arithmetic for |1+z|^2 - 1, long double for expm1.
sign is z/|z| (NumPy 2's; NumPy 1.24 here still gives the sign of the real part).

Edge cases ("edge" true: infinities, NaNs, signed zeros on branch cuts) are NumPy's own
results in the operand's dtype; the test compares them part by part, signs of zeros too.

Run with /usr/bin/python3 (NumPy 1.24) from the repository root:
    /usr/bin/python3 tests/golden/gen_complex_kernels.py
"""
import math
import os
from fractions import Fraction

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "complex_kernels_golden.inc")
rng = np.random.default_rng(20261202)
inf, nan = math.inf, math.nan


def lit(v):
    v = float(v)
    if math.isnan(v):
        return "NAN"
    if math.isinf(v):
        return "INFINITY" if v > 0 else "-INFINITY"
    if v == 0 and math.copysign(1, v) < 0:
        return "-0.0"
    return repr(v)


def vec(z):
    z = np.asarray(z, dtype=np.complex128).ravel()
    return "{" + ", ".join(f"{lit(c.real)}, {lit(c.imag)}" for c in z) + "}"


CDT = {64: np.complex64, 128: np.complex128}

# Regular points: moderate magnitudes in every quadrant, small ones for log1p/expm1.
REGULAR = [0.5 + 0.25j, -1.5 + 2.0j, 3.0 - 4.0j, -0.75 - 0.3j, 2.5 + 0.1j, -0.2 + 1.7j,
           1e-4 + 2e-4j, -3e-4 + 1e-4j, 0.9 - 0.01j, 1.25 + 3.5j]
SMALL = [1e-4 + 2e-4j, -3e-4 + 1e-4j, 2e-3 - 5e-3j, -1e-2 - 7e-3j, 0.1 + 0.2j]
LARGE = [1e4 + 3e3j, -2e3 + 1e4j, 5e2 - 7e2j]

# On the branch cuts (negative real axis, |x| > 1 on the real axis, the imaginary axis
# beyond +-i) with both signed zeros, and infinite / NaN parts.
CUTS = [complex(-2.0, 0.0), complex(-2.0, -0.0), complex(-0.5, 0.0), complex(-0.5, -0.0),
        complex(2.0, 0.0), complex(2.0, -0.0), complex(0.0, 2.0), complex(-0.0, 2.0),
        complex(0.0, -2.0), complex(-0.0, -2.0), complex(0.0, 0.0), complex(-0.0, -0.0),
        complex(-1.0, 0.0), complex(1.0, -0.0)]
SPECIAL = [complex(inf, 0.0), complex(-inf, 0.0), complex(inf, 1.0), complex(-inf, -1.0),
           complex(1.0, inf), complex(1.0, -inf), complex(inf, inf), complex(-inf, inf),
           complex(nan, 0.0), complex(0.0, nan), complex(nan, inf), complex(inf, nan)]

NP_FUNCS = {
    "exp": np.exp, "log": np.log, "tanh": np.tanh, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "sinh": np.sinh, "cosh": np.cosh, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "sqrt": np.sqrt,
    "rsqrt": lambda z: 1 / np.sqrt(z), "square": np.square, "neg": np.negative,
    "abs": np.abs, "real": np.real, "imag": np.imag, "conj": np.conj,
    "is_finite": np.isfinite,
}


def log1p_exact(z):
    # |1+z|^2 - 1 = 2x + x^2 + y^2 exactly, then rounded once.
    x, y = Fraction(z.real), Fraction(z.imag)
    t = float(2 * x + x * x + y * y)
    return complex(0.5 * math.log1p(t), math.atan2(z.imag, float(1 + x)))


def expm1_precise(z):
    x, y = np.longdouble(z.real), np.longdouble(z.imag)
    s = np.sin(y / 2)
    return complex(float(np.expm1(x) * np.cos(y) - 2 * s * s), float(np.exp(x) * np.sin(y)))


def sign(z):
    a = abs(z)
    return 0j if a == 0 else z / a


def regular_value(op, z):
    if op == "log1p":
        return log1p_exact(z)
    if op == "expm1":
        return expm1_precise(z)
    if op == "sign":
        return sign(z)
    return complex(NP_FUNCS[op](np.complex128(z)))


def annex_g_div(a, b):
    """C99 Annex G's recovery (libgcc's __divdc3) where Smith's algorithm gives NaN + NaN i;
    the kernels divide that way (NumPy leaves the NaNs)."""
    q = complex(np.complex128(a) / np.complex128(b))
    if not (math.isnan(q.real) and math.isnan(q.imag)):
        return q
    ar, ai, c, d = a.real, a.imag, b.real, b.imag
    if c == 0 and d == 0 and (not math.isnan(ar) or not math.isnan(ai)):
        return complex(math.copysign(inf, c) * ar, math.copysign(inf, c) * ai)
    if (math.isinf(ar) or math.isinf(ai)) and math.isfinite(c) and math.isfinite(d):
        ar = math.copysign(1.0 if math.isinf(ar) else 0.0, ar)
        ai = math.copysign(1.0 if math.isinf(ai) else 0.0, ai)
        return complex(inf * (ar * c + ai * d), inf * (ai * c - ar * d))
    if (math.isinf(c) or math.isinf(d)) and math.isfinite(ar) and math.isfinite(ai):
        c = math.copysign(1.0 if math.isinf(c) else 0.0, c)
        d = math.copysign(1.0 if math.isinf(d) else 0.0, d)
        return complex(0.0 * (ar * c + ai * d), 0.0 * (ai * c - ar * d))
    return q


def edge_value(op, z, bits):
    zz = CDT[bits](z)
    if op == "log1p":
        # log(1 + z) at the special values and on the cut, building 1 + z part by part
        # (adding 1 + 0i would turn a -0 imaginary part into +0).
        w = np.array([complex(1.0 + zz.real, 0.0)], dtype=CDT[bits])
        w.imag = zz.imag
        return complex(np.log(w[0]))
    if op == "expm1":
        if math.isfinite(zz.real) and zz.imag == 0:
            return complex(np.expm1(zz.real), zz.imag)  # expm1 of the real axis, signs kept
        return complex(np.exp(zz) - CDT[bits](1))
    if op == "rsqrt":
        return annex_g_div(1 + 0j, complex(np.sqrt(zz)))
    return complex(NP_FUNCS[op](zz))


def rounded(zs, bits):
    return [complex(CDT[bits](z)) for z in zs]


unary = []
ops = ["exp", "log", "log1p", "expm1", "tanh", "sin", "cos", "tan", "sinh", "cosh", "asin",
       "acos", "atan", "asinh", "acosh", "atanh", "sqrt", "rsqrt", "square", "neg", "sign",
       "abs", "real", "imag", "conj", "is_finite"]
with np.errstate(all="ignore"):
    for bits in (64, 128):
        for op in ops:
            pts = REGULAR + (SMALL + LARGE if op in ("log1p", "log", "sqrt", "abs") else [])
            if op == "expm1":
                pts = REGULAR + SMALL
            zs = rounded(pts, bits)
            unary.append((op, bits, False, zs, [regular_value(op, z) for z in zs]))
            edges = CUTS + SPECIAL
            if op in ("log1p",):
                edges = [complex(-1.0, 0.0), complex(-1.0, -0.0), complex(-3.0, 0.0),
                         complex(-3.0, -0.0)] + SPECIAL
            if op == "sign":
                continue  # checked in the test directly (NumPy 1.24's sign differs)
            unary.append((op, bits, True, rounded(edges, bits),
                          [edge_value(op, z, bits) for z in rounded(edges, bits)]))

binary = []
A = [0.5 + 0.25j, -1.5 + 2.0j, 3.0 - 4.0j, 1e-3 + 2.0j, 1e18 + 1e-18j, -7.0 + 0.0j, 2.0 + 3.0j]
B = [1.5 - 0.5j, 1e-3 + 7.0j, -2.0 - 1e-4j, 3.0 + 0.0j, 1e17 - 3e17j, 0.25 + 0.5j, -4.0 + 0.0j]
POW_B = [2.0 + 0.0j, 3.0 + 0.0j, -2.0 + 0.0j, 0.5 + 0.0j, 1.5 - 0.5j, 0.0 + 1.0j, 7.0 + 0.0j]
with np.errstate(all="ignore"):
    for bits in (64, 128):
        a, b = rounded(A, bits), rounded(B, bits)
        for op, f in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                      ("div", np.divide)):
            want = [complex(f(np.complex128(x), np.complex128(y))) for x, y in zip(a, b)]
            binary.append((op, bits, False, a, b, want))
        pa = rounded([0.5 + 0.25j, -1.5 + 2.0j, 1.0 + 2.0j, 0.9 - 0.01j, 2.0 + 0.0j, -3.0 + 1.0j,
                      1.25 + 0.5j], bits)
        pb = rounded(POW_B, bits)
        # Integer exponents go through NumPy's repeated multiplication in the dtype itself
        # (exact for Gaussian integers); the others through cpow in complex128.
        want = []
        for x, y in zip(pa, pb):
            if y.imag == 0 and y.real == int(y.real):
                want.append(complex(np.power(CDT[bits](x), CDT[bits](y))))
            else:
                want.append(complex(np.power(np.complex128(x), np.complex128(y))))
        binary.append(("pow", bits, False, pa, pb, want))
        # Edges: division by zero, 0**0 = 1, 0**y, NaN comparisons.
        ea = rounded([1.0 + 0.0j, 1.0 + 1.0j, complex(inf, 0.0), 0j, 0j, 0j, 0j, complex(nan, 0.0),
                      2.0 + 3.0j], bits)
        eb = rounded([0j, 0j, 1.0 + 0.0j, 0j, 2.0 + 0.0j, -1.0 + 0.0j, 1j, 0j, 2.0 + 3.0j], bits)
        for op, f in (("div", np.divide), ("pow", np.power), ("eq", np.equal),
                      ("ne", np.not_equal)):
            want = [complex(f(CDT[bits](x), CDT[bits](y))) for x, y in zip(ea, eb)]
            binary.append((op, bits, True, ea, eb, want))

# Reductions, scans, products on small arrays (complex128 values, rounded per dtype).
def crand(shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


red_x = crand((2, 3, 4))
dot_l = crand((2, 3, 4))  # batch 2, M 3, K 4
dot_r = crand((2, 4, 5))  # batch 2, K 4, N 5

with open(OUT, "w") as f:
    f.write(f"// Generated by tests/golden/gen_complex_kernels.py from NumPy {np.__version__}. "
            "Do not edit.\n// clang-format off\n")
    f.write("const std::vector<CxUnaryGolden> kCxUnary = {\n")
    for op, bits, edge, zs, ws in unary:
        f.write(f'  {{"{op}", {bits}, {str(edge).lower()}, {vec(zs)},\n   {vec(ws)}}},\n')
    f.write("};\n")
    f.write("const std::vector<CxBinaryGolden> kCxBinary = {\n")
    for op, bits, edge, a, b, w in binary:
        f.write(f'  {{"{op}", {bits}, {str(edge).lower()}, {vec(a)},\n   {vec(b)},\n   {vec(w)}}},\n')
    f.write("};\n")
    for bits in (64, 128):
        x = np.asarray(red_x, dtype=CDT[bits]).astype(np.complex128)
        f.write(f"const std::vector<double> kCxRedX{bits} = {vec(x)};\n")
        f.write(f"const std::vector<double> kCxSumAxis1_{bits} = {vec(x.sum(axis=1))};\n")
        f.write(f"const std::vector<double> kCxProdAxes02_{bits} = {vec(x.prod(axis=(0, 2)))};\n")
        f.write(f"const std::vector<double> kCxCumsumAxis1_{bits} = {vec(np.cumsum(x, axis=1))};\n")
        f.write(f"const std::vector<double> kCxCumprodAxis2_{bits} = {vec(np.cumprod(x, axis=2))};\n")
        l = np.asarray(dot_l, dtype=CDT[bits]).astype(np.complex128)
        r = np.asarray(dot_r, dtype=CDT[bits]).astype(np.complex128)
        f.write(f"const std::vector<double> kCxDotL{bits} = {vec(l)};\n")
        f.write(f"const std::vector<double> kCxDotR{bits} = {vec(r)};\n")
        f.write(f"const std::vector<double> kCxDotOut{bits} = {vec(np.matmul(l, r))};\n")
print("wrote", OUT)
