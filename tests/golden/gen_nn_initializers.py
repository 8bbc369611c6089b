#!/usr/bin/python3
"""Writes tests/golden/nn_initializers_golden.inc: what jax.nn.initializers return for given
keys, shapes and dtypes, re-derived from the published algorithms independently of jx:

* threefry2x32 (20 rounds, Random123) and JAX's key and random-bits layout with
  jax_threefry_partitionable=True (the default): element i is hashed from the 64-bit
  counter i = (hi, lo); 32-bit draws use y0 ^ y1, 64-bit draws (y0 << 32) | y1;
* jax.random.uniform: mantissa bits | 1.0, minus 1, scaled into [minval, maxval);
  normal: sqrt(2) erfinv(uniform(nextafter(-1, 0), 1)); truncated_normal: sqrt(2)
  erfinv(uniform(erf(lower/sqrt2), erf(upper/sqrt2))) clipped into the open interval;
* each initializer's formula from jax/_src/nn/initializers.py: the scale formed in the
  result dtype, variance_scaling's fans and its truncated-normal correction
  0.87962566103423978, orthogonal's QR with the sign of diag(R).

erfinv is PyTorch's float64 torch.special.erfinv rounded to the dtype, where XLA evaluates a
float32 polynomial: values can differ from JAX's in the last bits, and the test allows a few
ulps for that. The QR is NumPy's LAPACK in float64.

Run with /usr/bin/python3 (NumPy 1.24, PyTorch 1.13) from the repository root:
    /usr/bin/python3 tests/golden/gen_nn_initializers.py
"""
import math
import os

import numpy as np
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nn_initializers_golden.inc")
U32 = np.uint32
U64 = np.uint64


# ---- threefry2x32 and JAX's keys / bits ----

def rotl(x, d):
    return (x << U32(d)) | (x >> U32(32 - d))


def threefry2x32(k0, k1, x0, x1):
    """The block cipher on uint32 arrays (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        rotations = ([13, 15, 26, 6], [17, 29, 16, 24])
        ks = [U32(k0), U32(k1), U32(k0) ^ U32(k1) ^ U32(0x1BD11BDA)]
        x0 = (x0.astype(U32) + ks[0]).astype(U32)
        x1 = (x1.astype(U32) + ks[1]).astype(U32)
        for i in range(5):
            for r in rotations[i % 2]:
                x0 = (x0 + x1).astype(U32)
                x1 = rotl(x1, r) ^ x0
            x0 = (x0 + ks[(i + 1) % 3]).astype(U32)
            x1 = (x1 + ks[(i + 2) % 3] + U32(i + 1)).astype(U32)
    return x0, x1


def prng_key(seed):
    """jax.random.PRNGKey(seed) for a 32-bit seed: [0, uint32(seed)]."""
    return (0, seed & 0xFFFFFFFF)


# The docstring cross-check in main() flips this to reproduce JAX's older default.
PARTITIONABLE = True


def random_bits(key, width, shape):
    n = int(np.prod(shape, dtype=np.int64))
    if not PARTITIONABLE:  # legacy: hash counters [0, n) split in halves (32-bit only here)
        assert width == 32
        count = np.concatenate([np.arange(n, dtype=U32), np.zeros(n % 2, U32)])  # pad with 0
        y0, y1 = threefry2x32(key[0], key[1], count[:len(count) // 2], count[len(count) // 2:])
        return np.concatenate([y0, y1])[:n].reshape(shape)
    counter = np.arange(n, dtype=np.uint64)
    hi = (counter >> U64(32)).astype(U32)
    lo = (counter & U64(0xFFFFFFFF)).astype(U32)
    y0, y1 = threefry2x32(key[0], key[1], hi, lo)
    if width == 64:
        return ((y0.astype(U64) << U64(32)) | y1.astype(U64)).reshape(shape)
    return (y0 ^ y1).reshape(shape)


# ---- jax.random samplers, in the dtype's arithmetic ----

def uniform(key, shape, dtype, minval=0.0, maxval=1.0):
    dtype = np.dtype(dtype)
    lo, hi = dtype.type(minval), dtype.type(maxval)
    if dtype == np.float32:
        bits = random_bits(key, 32, shape)
        floats = ((bits >> U32(32 - 23)) | U32(0x3F800000)).view(np.float32) - np.float32(1)
    else:
        bits = random_bits(key, 64, shape)
        floats = ((bits >> U64(64 - 52)) | U64(0x3FF0000000000000)).view(np.float64) - 1.0
    return np.maximum(lo, floats * (hi - lo) + lo).astype(dtype)


def erfinv(u):
    """Inverse erf of dtype values, in float64 (PyTorch), rounded to the dtype."""
    e = torch.special.erfinv(torch.tensor(u.astype(np.float64), dtype=torch.float64)).numpy()
    return e.astype(u.dtype)


def normal(key, shape, dtype):
    dtype = np.dtype(dtype)
    lo = np.nextafter(dtype.type(-1), dtype.type(0))
    u = uniform(key, shape, dtype, lo, 1.0)
    return (dtype.type(math.sqrt(2)) * erfinv(u)).astype(dtype)


def truncated_normal(key, lower, upper, shape, dtype):
    dtype = np.dtype(dtype)
    sqrt2 = dtype.type(math.sqrt(2))
    lower, upper = dtype.type(lower), dtype.type(upper)
    a = dtype.type(math.erf(float(lower / sqrt2)))
    b = dtype.type(math.erf(float(upper / sqrt2)))
    u = uniform(key, shape, dtype, a, b)
    out = (sqrt2 * erfinv(u)).astype(dtype)
    return np.clip(out, np.nextafter(lower, dtype.type(np.inf)),
                   np.nextafter(upper, dtype.type(-np.inf))).astype(dtype)


# ---- jax.nn.initializers ----

def compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    def size(axes):
        axes = [axes] if isinstance(axes, int) else axes
        return math.prod(shape[i] for i in axes)
    receptive_field_size = math.prod(shape) / size(in_axis) / size(out_axis) / size(batch_axis)
    return size(in_axis) * receptive_field_size, size(out_axis) * receptive_field_size


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=()):
    def init(key, shape, dtype):
        dtype = np.dtype(dtype)
        fan_in, fan_out = compute_fans(shape, in_axis, out_axis, batch_axis)
        denominator = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[mode]
        variance = dtype.type(scale / denominator)
        if distribution == "truncated_normal":
            stddev = np.sqrt(variance) / dtype.type(0.87962566103423978)
            return truncated_normal(key, -2, 2, shape, dtype) * stddev
        if distribution == "normal":
            return normal(key, shape, dtype) * np.sqrt(variance)
        return uniform(key, shape, dtype, -1) * np.sqrt(dtype.type(3) * variance)
    return init


def orthogonal(scale=1.0, column_axis=-1):
    def init(key, shape, dtype):
        dtype = np.dtype(dtype)
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        matrix_shape = (n_cols, n_rows) if n_rows < n_cols else (n_rows, n_cols)
        a = normal(key, matrix_shape, dtype).astype(np.float64)
        q, r = np.linalg.qr(a)
        q = q * np.sign(np.diag(r))
        if n_rows < n_cols:
            q = q.T
        q = q.reshape(tuple(np.delete(shape, column_axis)) + (n_cols,))
        q = np.moveaxis(q, -1, column_axis)
        return (dtype.type(scale) * q.astype(dtype)).astype(dtype)
    return init


def delta_orthogonal(scale=1.0, column_axis=-1):
    def init(key, shape, dtype):
        ortho = orthogonal(scale, column_axis)(key, shape[-2:], dtype)
        w = np.zeros(shape, dtype)
        w[tuple((k - 1) // 2 for k in shape[:-2])] = ortho
        return w
    return init


INITS = {
    "uniform": lambda: (lambda k, s, d: uniform(k, s, d) * np.dtype(d).type(1e-2)),
    "uniform_10": lambda: (lambda k, s, d: uniform(k, s, d) * np.dtype(d).type(10.0)),
    "normal": lambda: (lambda k, s, d: normal(k, s, d) * np.dtype(d).type(1e-2)),
    "normal_5": lambda: (lambda k, s, d: normal(k, s, d) * np.dtype(d).type(5.0)),
    "truncated_normal": lambda: (
        lambda k, s, d: truncated_normal(k, -2.0, 2.0, s, d) * np.dtype(d).type(1e-2)),
    "truncated_normal_5_m1_3": lambda: (
        lambda k, s, d: truncated_normal(k, -1.0, 3.0, s, d) * np.dtype(d).type(5.0)),
    "glorot_uniform": lambda: variance_scaling(1.0, "fan_avg", "uniform"),
    "glorot_normal": lambda: variance_scaling(1.0, "fan_avg", "truncated_normal"),
    "lecun_uniform": lambda: variance_scaling(1.0, "fan_in", "uniform"),
    "lecun_normal": lambda: variance_scaling(1.0, "fan_in", "truncated_normal"),
    "he_uniform": lambda: variance_scaling(2.0, "fan_in", "uniform"),
    "he_normal": lambda: variance_scaling(2.0, "fan_in", "truncated_normal"),
    "vs_fan_out_normal": lambda: variance_scaling(0.5, "fan_out", "normal"),
    "vs_batch_axis": lambda: variance_scaling(1.0, "fan_in", "uniform", in_axis=-2,
                                              out_axis=-1, batch_axis=(0,)),
    "vs_multi_axes": lambda: variance_scaling(3.0, "fan_avg", "normal", in_axis=(0, 1),
                                              out_axis=-1),
    "orthogonal": lambda: orthogonal(),
    "orthogonal_2_axis0": lambda: orthogonal(2.0, 0),
    "delta_orthogonal": lambda: delta_orthogonal(),
}

# (initializer, seed, shape, dtype)
CASES = [
    ("uniform", 0, (3, 4), "float32"),
    ("uniform", 1701, (5,), "float64"),
    ("uniform_10", 42, (2, 3), "float32"),
    ("normal", 0, (3, 4), "float32"),
    ("normal", 1701, (2, 5), "float64"),
    ("normal_5", 42, (2, 3), "float32"),
    ("truncated_normal", 0, (4, 3), "float32"),
    ("truncated_normal", 7, (6,), "float64"),
    ("truncated_normal_5_m1_3", 42, (2, 3), "float32"),
    ("glorot_uniform", 42, (2, 3), "float32"),
    ("glorot_uniform", 3, (3, 3, 2, 4), "float32"),
    ("glorot_normal", 42, (2, 3), "float32"),
    ("glorot_normal", 5, (4, 6), "float64"),
    ("lecun_uniform", 42, (2, 3), "float32"),
    ("lecun_normal", 42, (2, 3), "float32"),
    ("lecun_normal", 11, (3, 3, 1, 8), "float32"),
    ("he_uniform", 42, (2, 3), "float32"),
    ("he_uniform", 2, (5, 7), "float64"),
    ("he_normal", 42, (2, 3), "float32"),
    ("he_normal", 9, (2, 2, 3, 4), "float32"),
    ("vs_fan_out_normal", 4, (6, 2), "float32"),
    ("vs_batch_axis", 8, (2, 3, 4), "float32"),
    ("vs_multi_axes", 6, (2, 3, 5), "float32"),
    ("orthogonal", 42, (2, 3), "float32"),
    ("orthogonal", 1, (5, 3), "float32"),
    ("orthogonal", 2, (4, 4), "float64"),
    ("orthogonal", 3, (2, 3, 4), "float32"),
    ("orthogonal_2_axis0", 4, (3, 5), "float32"),
    ("delta_orthogonal", 42, (3, 3, 3), "float32"),
    ("delta_orthogonal", 5, (3, 3, 2, 4), "float32"),
]

# JAX's docstrings (jax/_src/nn/initializers.py) print these for PRNGKey(42), (2, 3),
# float32. They are marked doctest: +SKIP and come from the legacy PRNG mode
# (jax_threefry_partitionable=False); main() reproduces them in that mode as a cross-check
# of this generator's samplers and formulas against JAX itself.
DOCSTRING = {
    "normal_5": [3.0613258, 5.6129413, 5.6866574, -4.063663, -4.4520254, 0.63115686],
    "truncated_normal_5": [2.9047365, 5.2338114, 5.29852, -3.836303, -4.192359, 0.6022964],
    "glorot_uniform": [0.50350785, 0.8088631, 0.81566876, -0.6393332, -0.6865721, 0.11003882],
    "glorot_normal": [0.41770416, 0.75262755, 0.7619329, -0.5516644, -0.6028657, 0.08661086],
    "lecun_uniform": [0.56293887, 0.90433645, 0.9119454, -0.71479625, -0.7676109, 0.12302713],
    "lecun_normal": [0.46700746, 0.8414632, 0.8518669, -0.61677957, -0.67402434, 0.09683388],
    "he_uniform": [0.79611576, 1.2789248, 1.2896855, -1.0108745, -1.0855657, 0.17398663],
    "he_normal": [0.6604483, 1.1900088, 1.2047218, -0.87225807, -0.95321447, 0.1369438],
    "uniform_10": [7.298188, 8.691938, 8.7230015, 2.0818567, 1.8662417, 5.5022564],
    "orthogonal": [3.9026976e-01, 7.2495741e-01, -5.6756169e-01, 8.8047469e-01, -4.7409311e-01,
                   -1.3157725e-04],
    # delta_orthogonal()(key, (3, 3, 3)): only the center slice [1] is nonzero.
    "delta_orthogonal": [0.27858758, -0.7949833, -0.53887904, 0.9120717, 0.04322892,
                         0.40774566, -0.30085585, -0.6050892, 0.73712474],
}


def lit(v):
    return repr(float(v))


def name_of(init, seed, shape, dtype):
    return "%s_%d_%s_%s" % (init, seed, "x".join(str(d) for d in shape), dtype)


def main():
    rows = []
    for init, seed, shape, dtype in CASES:
        out = INITS[init]()(prng_key(seed), shape, dtype)
        assert out.dtype == np.dtype(dtype) and out.shape == shape, (init, out.dtype, out.shape)
        rows.append('{"%s", {%s}, {%s}},' % (name_of(init, seed, shape, dtype),
                                             ", ".join(str(d) for d in shape),
                                             ", ".join(lit(v) for v in out.ravel())))
    fans = [((3, 3, 1, 32), -2, -1, ()), ((5, 7), -2, -1, ()), ((2, 3, 4), -2, -1, (0,)),
            ((2, 3, 5), (0, 1), -1, ()), ((4, 3, 3, 3, 8), -2, -1, ())]
    for shape, i, o, b in fans:
        fi, fo = compute_fans(shape, i, o, b)
        rows.append('{"fans_%s", {2}, {%s, %s}},' % ("x".join(str(d) for d in shape), lit(fi),
                                                    lit(fo)))
    global PARTITIONABLE
    PARTITIONABLE = False
    doc_truncated = truncated_normal(prng_key(42), -2.0, 2.0, (2, 3), "float32") * np.float32(5.0)
    for name, want in DOCSTRING.items():
        if name == "truncated_normal_5":
            got = doc_truncated
        elif name == "delta_orthogonal":
            got = INITS[name]()(prng_key(42), (3, 3, 3), "float32")[1]
        else:
            got = INITS[name]()(prng_key(42), (2, 3), "float32")
        assert np.allclose(got.ravel(), want, rtol=1e-5, atol=1e-6), (name, got, want)
        print("JAX docstring %-18s reproduced (legacy PRNG mode)" % name)
    PARTITIONABLE = True
    with open(OUT, "w") as f:
        f.write("// Generated by tests/golden/gen_nn_initializers.py (NumPy %s, PyTorch %s); "
                "do not edit.\n" % (np.__version__, torch.__version__))
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
