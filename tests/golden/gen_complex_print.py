#!/usr/bin/python3
"""Goldens for printing and .npy/.npz I/O of complex64/complex128, produced by NumPy itself.

Run with /usr/bin/python3 (NumPy 1.24):  /usr/bin/python3 tests/golden/gen_complex_print.py
Writes tests/golden/complex_print_golden.inc, #included by tests/numpy/complex_io_test.cpp.

It holds, in order:
  JX_PRINT_CASE(dtype, {shape}, "hex bytes" or "", arange, weak, {options}, repr, str)
  JX_NPY_FILE("name", "hex of the file np.save / np.savez / np.savez_compressed wrote")
  JX_NPY_ARRAY("file name", "npz member or empty", dtype, {shape}, "hex of the C-order
               little-endian values")
The test defines the three macros. repr() is jax.Array.__repr__ (jax/_src/array.py) over
np.array2string, reproduced in `jax_repr` as in gen_print.py; str() is np.array_str. "arange"
arrays are not spelled out: element i is complex(i, -i / 2).
"""
import io
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
c64, c128 = np.complex64, np.complex128
nan, inf = np.nan, np.inf
rng = np.random.default_rng(7)


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


def shape_str(shape):
    return "{" + ", ".join(str(d) for d in shape) + "}"


def le_hex(a):
    return np.ascontiguousarray(a).astype(a.dtype.newbyteorder('<')).tobytes().hex()


def arange_c(n, dt):
    a = np.empty(n, dt)
    a.real = np.arange(n)
    a.imag = -0.5 * np.arange(n, dtype=np.float64)  # element 0 is 0-0j
    return a


def randc(shape, dt, scale=1.0):
    return ((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)) * scale).astype(dt)


cases = []  # (array, weak, options, arange)


def add(x, dt=None, weak=False, opts=None, arange=False):
    cases.append((np.asarray(x, dt) if dt else np.asarray(x), weak, opts or {}, arange))


for dt in (c64, c128):
    # scalars: NumPy prints a complex scalar's str as "(1+2j)", and "2j" when the real part is +0
    for v in (1 + 2j, 2j, complex(-0.0, 2), 0j, complex(-0.0, -0.0), complex(1, -0.0),
              complex(0.1, -0.2), complex(nan, 1), complex(1, nan), complex(inf, -inf),
              complex(-inf, inf), complex(0, nan), complex(0, -inf), complex(1e20, 1e-5),
              complex(1e-5, 0), complex(1e16, 1), complex(1e15, 1e-4), complex(-1.5e-7, 3),
              complex(np.pi, -np.e), complex(123456789, 0.5)):
        add(v, dt)
    # 1-d, 2-d, 3-d
    add([1 + 2j, 3 - 4.5j], dt)
    add([[1 + 2j, 3 - 4j]], dt)
    add([0j, 1j, -1j, 1], dt)
    add([complex(1, -0.0), complex(2, 0.0), complex(-0.0, 1)], dt)
    add([complex(-0.0, -0.0)], dt)
    # mixed magnitudes: each part picks positional or scientific on its own
    add([1e-5 + 1j, 1e3 + 1e5j], dt)
    add([1 + 1e-5j, 2 + 3j], dt)
    add([1e8 + 1j, 1 + 1j], dt)
    add([1 + 1e8j, 1 + 1j], dt)
    add([1 + 1j, 1001 + 1j], dt)
    add([1e-20 + 1e20j, 3 - 3j], dt)
    add([0.1 + 0.25j, 1 / 3 - 1j / 3], dt)
    # inf / nan in either part
    add([complex(nan, 1), complex(1, inf), complex(-inf, nan), 2 + 3j], dt)
    add([complex(nan, nan), complex(nan, nan)], dt)
    add([complex(1, -inf), complex(inf, 0)], dt)
    add([complex(0, nan), 1.5 + 0j], dt)
    add([complex(inf, inf)], dt)
    # random values in several shapes and scales
    add(randc((5, 4), dt))
    add(randc((3, 3), dt, 1e-3))
    add(randc((2, 3), dt, 1e4))
    add(randc((2, 2, 3), dt))
    add(randc(12, dt) * (10.0 ** rng.integers(-10, 10, 12)).astype(dt))
    # wrapping and summarization (> 1000 elements)
    add(arange_c(30, dt), arange=True)
    add(arange_c(1001, dt), arange=True)
    add(arange_c(2000, dt).reshape(40, 50), arange=True)
    add(arange_c(1331, dt).reshape(11, 11, 11), arange=True)
    add(randc((3, 400), dt))
    add(randc((2, 2, 300), dt))
    add(randc(9, dt))
    # size 0
    add(np.zeros((0,), dt))
    add(np.zeros((2, 0), dt))

# complex128 keeps 17 significant digits per part (float32 parts 9)
add([1 / 3 + 2j / 3, np.pi * 1e7 - 1j * np.e * 1e-7], c128)
add([0.1 + 0.2j, 0.30000000000000004 - 1e-300j], c128)
add([5e-324 + 1e308j], c128)
add(complex(1 / 3, 2 / 3), c128)
add([complex(2.0 ** 60, 2.0 ** 54)], c128)
add([1e-45 + 1j], c64)

# weak types (a Python complex in JAX is a weak complex64)
add(1 + 2j, c64, weak=True)
add([1.5 - 2j], c64, weak=True)

# print options
x = randc((3, 4), c64)
add(x, opts=dict(precision=3))
add(x, opts=dict(precision=0))
add(x, opts=dict(sign='+'))
add(x, opts=dict(sign=' '))
add(np.abs(x.real) + 1j * np.abs(x.imag), opts=dict(sign=' '))
add(x, opts=dict(floatmode='fixed', precision=4))
add(x, opts=dict(floatmode='unique'))
add(x, opts=dict(floatmode='maxprec_equal'))
add([0.5 + 0.25j, 1 + 1j], c64, opts=dict(floatmode='maxprec_equal'))
add([1e-5 + 1j, 123 - 1e-6j], c128, opts=dict(suppress=True))
add([1e-5 + 1j, 1e9 - 1j], c128, opts=dict(suppress=True))
add([complex(nan, -inf), 1 + 1j], c128, opts=dict(sign='+'))
add([complex(nan, inf), 1 + 1j], c128, opts=dict(sign=' '))
add([complex(nan, inf)], c128, opts=dict(nanstr='NaN', infstr='Infinity'))
add(arange_c(20, c64), opts=dict(threshold=10), arange=True)
add(arange_c(20, c64), opts=dict(threshold=10, edgeitems=1), arange=True)
add(arange_c(60, c64).reshape(3, 4, 5), opts=dict(threshold=5, edgeitems=1), arange=True)
add(arange_c(20, c64), opts=dict(threshold=10, edgeitems=0), arange=True)
add(arange_c(30, c64), opts=dict(linewidth=40), arange=True)
add(arange_c(30, c128), opts=dict(linewidth=10), arange=True)

out = ["// Generated by tests/golden/gen_complex_print.py with NumPy " + np.__version__ +
       ". Do not edit."]
for a, weak, opts, arange in cases:
    names = dict(precision=8, threshold=1000, edgeitems=3, linewidth=75, suppress=False,
                 sign='-', floatmode='maxprec', nanstr='nan', infstr='inf')
    names.update(opts)
    with np.printoptions(**names):
        r = jax_repr(a, weak)
        s = str(a)
    if arange:
        assert le_hex(a.ravel()) == le_hex(arange_c(a.size, a.dtype))
        hexdata = ""
    else:
        hexdata = le_hex(a)
    o = names
    optstr = ('{%d, %d, %d, %d, %s, \'%s\', "%s", "%s", "%s"}' %
              (o['precision'], o['threshold'], o['edgeitems'], o['linewidth'],
               'true' if o['suppress'] else 'false', o['sign'], o['floatmode'], o['nanstr'],
               o['infstr']))
    out.append('JX_PRINT_CASE("%s", %s, "%s", %s, %s, %s,\n %s,\n %s)' %
               (a.dtype.name, shape_str(a.shape), hexdata, 'true' if arange else 'false',
                'true' if weak else 'false', optstr, cstr(r), cstr(s)))

# ---- .npy / .npz files as NumPy writes them ---------------------------------------------------
files = []   # (name, bytes)
arrays = []  # (file, member, array)


def npy(name, a):
    buf = io.BytesIO()
    np.save(buf, a)
    files.append((name, buf.getvalue()))
    arrays.append((name, "", a))


npy("c64.npy", np.array([1 + 2j, 3 - 4.5j, complex(nan, inf), complex(-0.0, -1e-30)], c64))
npy("c128.npy", randc((2, 3), c128))
npy("c128_0d.npy", np.array(complex(1 / 3, -2 / 3), c128))
npy("c64_empty.npy", np.zeros((0, 3), c64))
npy("c64_be.npy", np.array([[1 + 2j, 3 - 4j], [0.5 + 0.25j, -1j]], '>c8'))
npy("c128_be.npy", np.array([np.pi + 1j * np.e, -1e300 + 1e-300j], '>c16'))
npy("c128_fortran.npy", np.asfortranarray(randc((3, 2), c128)))
npy("c64_fortran_be.npy", np.asfortranarray(np.arange(6).reshape(2, 3) * (1 - 2j)).astype('>c8'))
for name, saver in (("both.npz", np.savez), ("both_compressed.npz", np.savez_compressed)):
    members = {"x": randc((4,), c64), "y": randc((2, 2), c128), "r": np.arange(3, dtype=np.float32)}
    buf = io.BytesIO()
    saver(buf, **members)
    files.append((name, buf.getvalue()))
    for k, v in members.items():
        arrays.append((name, k, v))

for name, data in files:
    out.append('JX_NPY_FILE("%s", "%s")' % (name, data.hex()))
for name, member, a in arrays:
    dt = a.dtype.newbyteorder('=').name
    out.append('JX_NPY_ARRAY("%s", "%s", "%s", %s, "%s")' %
               (name, member, dt, shape_str(a.shape), le_hex(a)))

with open(os.path.join(HERE, "complex_print_golden.inc"), "w") as f:
    f.write("\n".join(out) + "\n")
print(len(cases), "print cases,", len(files), "files,", len(arrays), "arrays")
