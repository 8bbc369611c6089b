#!/usr/bin/python3
"""Goldens for jx's array printing, produced by NumPy's own printing.

Run with /usr/bin/python3 (NumPy 1.24):  /usr/bin/python3 tests/golden/gen_print.py
Writes tests/golden/print_golden.inc, #included by tests/numpy/print_test.cpp.

repr() is what jax.Array.__repr__ (jax/_src/array.py) builds from np.array2string; it is
reproduced in `jax_repr` below (no JAX here). str() is np.array_str. The arrays reach C++ as
raw little-endian bytes (hex), or as "arange" (element i is i converted to the dtype).
"""
import os
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def jax_repr(x, weak=False):
    prefix = 'Array('
    dtype_str = f'dtype={x.dtype.name}, weak_type=True)' if weak else f'dtype={x.dtype.name})'
    line_width = np.get_printoptions()["linewidth"]
    if x.size == 0:
        s = f"[], shape={x.shape}"
    else:
        s = np.array2string(x, prefix=prefix, suffix=',', separator=', ', max_line_width=line_width)
    last_line_len = len(s) - s.rfind('\n') + 1
    sep = ' '
    if last_line_len + len(dtype_str) + 1 > line_width:
        sep = ' ' * len(prefix)
    return f"{prefix}{s},{sep}{dtype_str}"


def cstr(s):
    assert ')~"' not in s
    return 'R"~(' + s + ')~"'


cases = []  # (array, weak, options dict, use_arange)


def add(x, weak=False, opts=None, arange=False):
    cases.append((np.asarray(x), weak, opts or {}, arange))


f16, f32, f64 = np.float16, np.float32, np.float64
rng = np.random.default_rng(0)
nan, inf = np.nan, np.inf

# ---- floats: formatting of values -------------------------------------------------------
for dt in (f32, f64, f16):
    add(np.array([[1, 2]], dt))
    add(np.array(2.0, dt))
    add(np.array(-0.0, dt))
    add(np.array(0.1, dt))
    add(np.array([0.1, 0.25, 1 / 3], dt))
    add(np.array([np.pi, -np.e], dt))
    add(np.array([1e-5, 1.0], dt))
    add(np.array([1.0, 999.0], dt))
    add(np.array([1.0, 1001.0], dt))
    add(np.array([0.0, -0.0, 1.5], dt))
    add(np.array([nan, 1.5, -inf, inf], dt))
    add(np.array([nan, nan], dt))
    add(np.array([-inf], dt))
    add(np.array([inf, 0.0], dt))
    add(np.array(nan, dt))
    add(np.array(-inf, dt))
    add(np.array([100.0, 0.5, 12.25], dt))
    add(np.array(1e-4, dt))
    add(np.array([0.0001, 1], dt))
    add(rng.standard_normal((5, 7)).astype(dt))
    add((rng.standard_normal((4, 6)) * 1e-3).astype(dt))
    add((rng.standard_normal((3, 5)) * 1e4).astype(dt))
    add(np.arange(30, dtype=dt), arange=True)
    add(np.arange(1001, dtype=dt) if dt != f16 else np.arange(1001).astype(dt), arange=True)
for dt in (f32, f64):
    add(np.array([1e8, 1.0], dt))
    add(np.array([99999999.0, 1.0], dt))
    add(np.array([123456789.0], dt))
    add(np.array(1e16, dt))
    add(np.array(1e15, dt))
    add(np.array(-1.5e-7, dt))
    add(np.array([1e20, -1e-20, 3.0], dt))
    add(np.array([1e-38, 3e38], dt))
    add(rng.standard_normal((2, 3, 4)).astype(dt))
    add(np.array([0.5, 2 ** 29, 3], dt))
    add(np.array(2.0 ** 29, dt))
    add((rng.standard_normal(12) * 10.0 ** rng.integers(-12, 12, 12)).astype(dt))
add(np.array([5e-324, 1e308], f64))
add(np.array(5e-324, f64))
add(np.array([2.0 ** 60, 2.0 ** 54], f64))
add(np.array([np.pi * 1e7, 1.0], f64))
add(np.array([1 / 3, 2 / 3, 1e-9], f64))
add(np.array([1e-45, 1.0], f32))
add(np.array([8192, 0.5], f16))
add(np.array([8192], f16))
add(np.array(8192, f16))
add(np.array([65504, 60000], f16))
add(np.array([65504, 0.001], f16))
add(np.array([6e-8, 1.0], f16))
add(rng.standard_normal(200).astype(f16))
# bit patterns spread over the whole float32 range (0-d, so str() is the scalar's str)
for bits in rng.integers(0, 2 ** 32, 40, dtype=np.uint64):
    add(np.array(np.uint32(bits)).view(f32))
for bits in rng.integers(0, 2 ** 16, 20, dtype=np.uint64):
    add(np.array(np.uint16(bits)).view(f16))
for bits in rng.integers(0, 2 ** 63, 30, dtype=np.uint64):
    add(np.array(np.uint64(bits)).view(f64))

# ---- integers and bools --------------------------------------------------------------------
add(np.array([-128, 0, 127], np.int8))
add(np.array([0, 255, 7], np.uint8))
add(np.array([[-32768, 5], [32767, -1]], np.int16))
add(np.array([1, 2, 3], np.int32))
add(np.array(7, np.int32))
add(np.array(-7, np.int64))
add(np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max], np.int64))
add(np.array([0, np.iinfo(np.uint32).max], np.uint32))
add(np.array([0, 65535], np.uint16))
add(np.array([0, np.iinfo(np.uint64).max], np.uint64))
add(np.array(np.iinfo(np.uint64).max, np.uint64))
add(np.arange(100, dtype=np.int32), arange=True)
add(np.arange(1001, dtype=np.int32), arange=True)
add(np.arange(2000, dtype=np.int64).reshape(40, 50), arange=True)
add(np.arange(1331, dtype=np.int32).reshape(11, 11, 11), arange=True)
add(np.arange(24, dtype=np.int32).reshape(2, 3, 4), arange=True)
add(np.arange(16, dtype=np.int8).reshape(2, 2, 2, 2), arange=True)
add(rng.integers(-10 ** 6, 10 ** 6, (6, 9)).astype(np.int32))
add(np.array([True, False, True]))
add(np.array(True))
add(np.array(False))
add(np.array([[True], [False]]))
add(rng.integers(0, 2, (30, 40)).astype(bool))
add(rng.integers(0, 2, (2000, 1)).astype(bool))

# ---- size 0 --------------------------------------------------------------------------------
add(np.zeros((0,), f32))
add(np.zeros((0, 3), f32))
add(np.zeros((2, 0, 4), np.int32))
add(np.zeros((0,), bool))

# ---- wrapping and summarizing ---------------------------------------------------------------
add((np.arange(50) / 7).astype(f64))
add((np.arange(120) / 7).astype(f32).reshape(3, 40))
add(rng.standard_normal((30, 40)).astype(f32))
add(rng.standard_normal((3, 400)).astype(f64))
add(rng.standard_normal((2, 2, 300)).astype(f32))
add(rng.standard_normal((7, 1, 200)).astype(f32))
add(rng.standard_normal(6).astype(f32))
add(rng.standard_normal(7).astype(f32))
add(rng.standard_normal(8).astype(f64))
add(rng.standard_normal((2, 6)).astype(f32))
add(rng.standard_normal((2, 7)).astype(f64))

# ---- weak types (only the repr changes) ----------------------------------------------------
add(np.array(2.0, f32), weak=True)
add(np.array(2, np.int32), weak=True)
add(np.array([1.5, 2.5], f32), weak=True)
add(rng.standard_normal(6).astype(f32), weak=True)
add(rng.standard_normal(7).astype(f32), weak=True)

# ---- print options ---------------------------------------------------------------------------
x = rng.standard_normal((4, 5)).astype(f32)
add(x, opts=dict(precision=3))
add(x, opts=dict(precision=0))
add(x, opts=dict(sign='+'))
add(x, opts=dict(sign=' '))
add(np.abs(x), opts=dict(sign=' '))
add(x, opts=dict(floatmode='fixed', precision=4))
add(x, opts=dict(floatmode='unique'))
add(x, opts=dict(floatmode='maxprec_equal'))
add(np.array([0.5, 0.25, 1.0], f32), opts=dict(floatmode='maxprec_equal'))
add(np.array([0.5, 0.25, 1.0], f32), opts=dict(floatmode='fixed', precision=3))
add(np.array([1e-5, 1.0, 123.0], f64), opts=dict(suppress=True))
add(np.array([1e-5, 1.0, 123.0], f64), opts=dict(suppress=True, precision=3))
add(np.array([1e-5, 1e9], f64), opts=dict(suppress=True))
add(np.array([1e-5, 1.0, nan, -inf], f64), opts=dict(sign='+'))
add(np.array([1.0, nan, inf], f64), opts=dict(sign=' '))
add(np.array([1e-5, 1.0], f64), opts=dict(floatmode='fixed', precision=2))
add(np.arange(20, dtype=np.int32), opts=dict(threshold=10), arange=True)
add(np.arange(20, dtype=np.int32), opts=dict(threshold=10, edgeitems=1), arange=True)
add(np.arange(60, dtype=np.int32).reshape(3, 4, 5), opts=dict(threshold=5, edgeitems=1), arange=True)
add(np.arange(20, dtype=np.int32), opts=dict(threshold=10, edgeitems=0), arange=True)
add((np.arange(12) * 1000.5).astype(f64).reshape(3, 4), opts=dict(threshold=4, edgeitems=0))
add(np.arange(30, dtype=f32), opts=dict(linewidth=40), arange=True)
add(np.arange(30, dtype=f32), opts=dict(linewidth=10), arange=True)
add(rng.standard_normal((3, 3)).astype(f64), opts=dict(linewidth=20))
add(np.array([nan, inf]), opts=dict(nanstr='NaN', infstr='Infinity'))


def dtype_name(a):
    return a.dtype.name


out = ["// Generated by tests/golden/gen_print.py with NumPy " + np.__version__ + ". Do not edit.",
       "// {dtype, shape, hex bytes or \"\", arange, weak, options, repr, str}"]
for a, weak, opts, arange in cases:
    names = dict(precision=8, threshold=1000, edgeitems=3, linewidth=75, suppress=False,
                 sign='-', floatmode='maxprec', nanstr='nan', infstr='inf')
    names.update(opts)
    with np.printoptions(**names):
        r = jax_repr(a, weak)
        s = str(a)
    if arange:
        assert np.array_equal(a.ravel(), np.arange(a.size).astype(a.dtype))
        hexdata = ""
    else:
        hexdata = np.ascontiguousarray(a).astype(a.dtype.newbyteorder('<')).tobytes().hex()
    shape = "{" + ", ".join(str(d) for d in a.shape) + "}"
    o = names
    optstr = ('{%d, %d, %d, %d, %s, \'%s\', "%s", "%s", "%s"}' %
              (o['precision'], o['threshold'], o['edgeitems'], o['linewidth'],
               'true' if o['suppress'] else 'false', o['sign'], o['floatmode'], o['nanstr'],
               o['infstr']))
    out.append('{"%s", %s, "%s", %s, %s, %s,\n %s,\n %s},' %
               (dtype_name(a), shape, hexdata, 'true' if arange else 'false',
                'true' if weak else 'false', optstr, cstr(r), cstr(s)))

with open(os.path.join(HERE, "print_golden.inc"), "w") as f:
    f.write("\n".join(out) + "\n")

# ---- np.format_float_positional / np.format_float_scientific ---------------------------------
fout = ["// Generated by tests/golden/gen_print.py with NumPy " + np.__version__ + ". Do not edit.",
        "// {width, bits, scientific, precision, unique, fractional, trim, sign, pad_left,",
        "//  pad_right, exp_digits, min_digits, expected}"]


def fadd(width, bits, sci, precision=None, unique=True, fractional=True, trim='k', sign=False,
         pad_left=None, pad_right=None, exp_digits=None, min_digits=None):
    dt = {16: (np.uint16, f16), 32: (np.uint32, f32), 64: (np.uint64, f64)}[width]
    v = np.array(dt[0](bits)).view(dt[1])[()]
    if sci:
        e = np.format_float_scientific(v, precision=precision, unique=unique, trim=trim, sign=sign,
                                       pad_left=pad_left, exp_digits=exp_digits,
                                       min_digits=min_digits)
    else:
        e = np.format_float_positional(v, precision=precision, unique=unique, fractional=fractional,
                                       trim=trim, sign=sign, pad_left=pad_left,
                                       pad_right=pad_right, min_digits=min_digits)
    n = lambda x: -1 if x is None else x
    fout.append('{%d, 0x%xull, %s, %d, %s, %s, \'%s\', %s, %d, %d, %d, %d, %s},' %
                (width, bits, 'true' if sci else 'false', n(precision), 'true' if unique else 'false',
                 'true' if fractional else 'false', trim, 'true' if sign else 'false', n(pad_left),
                 n(pad_right), n(exp_digits), n(min_digits), cstr(e)))


def bits_of(v, width):
    dt = {16: (np.uint16, f16), 32: (np.uint32, f32), 64: (np.uint64, f64)}[width]
    with np.errstate(over='ignore'):
        return int(np.array(v, dt[1]).view(dt[0]))


samples = []
for width, top in ((16, 2 ** 16), (32, 2 ** 32), (64, 2 ** 64)):
    for b in rng.integers(0, top, 60, dtype=np.uint64, endpoint=False):
        samples.append((width, int(b)))
    for v in (0.0, -0.0, 1.0, 0.1, 0.3, 2.5, 3.5, 1 / 3, 8192.0, 1e-4, 9.5, 0.5, 123.456, 65504.0,
              1e7, 2 ** 29, 1e-7, 6e-8, 999999.5, np.pi):
        samples.append((width, bits_of(v, width)))
for width, b in samples:
    dt = {16: (np.uint16, f16), 32: (np.uint32, f32), 64: (np.uint64, f64)}[width]
    v = np.array(dt[0](b)).view(dt[1])[()]
    if not np.isfinite(v):
        fadd(width, b, False)
        fadd(width, b, True, sign=True)
        continue
    fadd(width, b, True)
    fadd(width, b, True, precision=3, trim='.')
    fadd(width, b, True, precision=4, unique=False, trim='-', exp_digits=3)
    fadd(width, b, True, precision=6, min_digits=5, pad_left=4)
    if abs(float(v)) < 1e30:
        fadd(width, b, False)
        fadd(width, b, False, precision=8, trim='.', min_digits=0, pad_left=5, pad_right=9)
        fadd(width, b, False, precision=5, unique=False, trim='0', sign=True)
        fadd(width, b, False, precision=4, fractional=False, trim='-')
        fadd(width, b, False, precision=3, unique=False, fractional=False)
    else:
        fadd(width, b, False, precision=2)

with open(os.path.join(HERE, "print_float_golden.inc"), "w") as f:
    f.write("\n".join(fout) + "\n")
print(len(cases), "print cases,", len(fout) - 3, "float cases")
