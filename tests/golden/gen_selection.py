#!/usr/bin/python3
"""Writes tests/golden/selection_golden.inc: NumPy's results for jnp selection functions
(where, take, take_along_axis, put_along_axis, nonzero, argwhere, flatnonzero, compress,
extract, choose, select, searchsorted, digitize, unique) as C++ initializers for
tests/numpy/selection_test.cpp. Run: /usr/bin/python3 tests/golden/gen_selection.py

Each case pairs a NumPy expression with the jx expression that must agree with it; only
inputs on which NumPy and JAX agree appear (in-bounds indices, no 'fill' mode)."""
import os
import numpy as np

# Operands, defined identically in the test (selection_test.cpp: operands()).
ENV = {
    "np": np,
    "a": np.arange(12, dtype=np.float32).reshape(3, 4),
    "v": np.array([3., 1., 4., 1., 5., 9., 2., 6.], dtype=np.float32),
    "s": np.array([1., 2., 2., 4., 7., 7., 7., 9.], dtype=np.float32),
    "i": np.array([[2, 0, 1, -1], [1, 1, 0, 3]], dtype=np.int32),
    "m": np.array([[1, 0, 2, 0], [0, 0, 3, 4], [5, 0, 0, 0]], dtype=np.int32),
    "nanv": np.array([2., np.nan, 1., 2., np.nan, 0.], dtype=np.float32),
}

CASES = [
    # (numpy expression, jx expression)
    ("np.where(a > 5, a, -a)", "jnp::where(a > 5.0, a, a * -1.0)"),
    ("np.where(m, 1.5, a)", "jnp::where(m, 1.5, a)"),
    ("np.where(np.array([[True], [False], [True]]), v[:4], 0)",
     "jnp::where(jnp::array<bool>({true, false, true}, jx::Shape{3, 1}), v(jx::slice(jx::none, 4)), 0)"),
    ("np.take(a, np.array([5, 0, 11, -1]))", "jnp::take(a, jnp::array<int32_t>({5, 0, 11, -1}))"),
    ("np.take(a, np.array([[2, 0], [1, 1]]), axis=0)",
     "jnp::take(a, jnp::array<int32_t>({2, 0, 1, 1}, jx::Shape{2, 2}), 0)"),
    ("np.take(a, np.array([3, -4]), axis=1)", "jnp::take(a, jnp::array<int32_t>({3, -4}), 1)"),
    ("np.take(a, np.array([7, -9]), axis=1, mode='clip')",
     "jnp::take(a, jnp::array<int32_t>({7, -9}), 1, jnp::TakeMode::clip)"),
    ("np.take(a, np.array([5, -6]), axis=1, mode='wrap')",
     "jnp::take(a, jnp::array<int32_t>({5, -6}), 1, jnp::TakeMode::wrap)"),
    ("np.take_along_axis(a, np.array([[2, 0, 1, 2], [1, 1, 0, 0]]), axis=0)",
     "jnp::take_along_axis(a, jnp::array<int32_t>({2, 0, 1, 2, 1, 1, 0, 0}, jx::Shape{2, 4}), 0)"),
    ("np.take_along_axis(a[:2], i, axis=1)", "jnp::take_along_axis(a(jx::slice(jx::none, 2)), i, 1)"),
    ("np.take_along_axis(a, np.argsort(-a, axis=1), axis=1)",
     "jnp::take_along_axis(a, jnp::array<int32_t>({3, 2, 1, 0, 3, 2, 1, 0, 3, 2, 1, 0}, jx::Shape{3, 4}), 1)"),
    ("np.take_along_axis(a, np.array([[1], [0], [3]]), axis=1)",
     "jnp::take_along_axis(a, jnp::array<int32_t>({1, 0, 3}, jx::Shape{3, 1}), 1)"),
    ("np.take_along_axis(a, np.array([[2, 0, 1, 1]]), axis=0)",
     "jnp::take_along_axis(a, jnp::array<int32_t>({2, 0, 1, 1}, jx::Shape{1, 4}), 0)"),
    ("np.take_along_axis(v, np.array([7, 0, -1]), axis=None)",
     "jnp::take_along_axis(v, jnp::array<int32_t>({7, 0, -1}), std::nullopt)"),
    ("put_along_axis(a, np.array([[1], [0], [3]]), 99., 1)",
     "jnp::put_along_axis(a, jnp::array<int32_t>({1, 0, 3}, jx::Shape{3, 1}), 99.0, 1, false)"),
    ("put_along_axis(a, np.array([[2, 0, 1, 1]]), -v[:4][None], 0)",
     "jnp::put_along_axis(a, jnp::array<int32_t>({2, 0, 1, 1}, jx::Shape{1, 4}), v(jx::slice(jx::none, 4))(jx::newaxis) * -1.0, 0, false)"),
    ("np.nonzero(m)[0]", "jnp::nonzero(m)[0]"),
    ("np.nonzero(m)[1]", "jnp::nonzero(m)[1]"),
    ("np.argwhere(m)", "jnp::argwhere(m)"),
    ("np.argwhere(a > 8)", "jnp::argwhere(a > 8.0)"),
    ("np.flatnonzero(m)", "jnp::flatnonzero(m)"),
    ("np.compress([True, False, True], a, axis=0)",
     "jnp::compress(jnp::array<bool>({true, false, true}), a, 0)"),
    ("np.compress([0, 1, 1, 0], a, axis=1)", "jnp::compress(jnp::array<int32_t>({0, 1, 1, 0}), a, 1)"),
    ("np.compress([1, 0, 1], a)", "jnp::compress(jnp::array<int32_t>({1, 0, 1}), a)"),
    ("np.extract(m, a)", "jnp::extract(m, a)"),
    ("np.choose(np.array([[0, 1, 2, 1]]), [a, -a, a * 10])",
     "jnp::choose(jnp::array<int32_t>({0, 1, 2, 1}, jx::Shape{1, 4}), {a, a * -1.0, a * 10.0})"),
    ("np.choose(np.array([3, -1, 1, 4]), [v[:4], v[4:]], mode='wrap')",
     "jnp::choose(jnp::array<int32_t>({3, -1, 1, 4}), {v(jx::slice(jx::none, 4)), v(jx::slice(4, jx::none))}, jnp::ChooseMode::wrap)"),
    ("np.choose(np.array([3, -1, 1, 0]), [v[:4], v[4:]], mode='clip')",
     "jnp::choose(jnp::array<int32_t>({3, -1, 1, 0}), {v(jx::slice(jx::none, 4)), v(jx::slice(4, jx::none))}, jnp::ChooseMode::clip)"),
    ("np.select([a < 3, a > 8], [a, a * 2], default=-1)",
     "jnp::select({a < 3.0, a > 8.0}, {a, a * 2.0}, -1)"),
    ("np.select([a < 6, a < 9], [-a, 10 * a])", "jnp::select({a < 6.0, a < 9.0}, {a * -1.0, a * 10.0})"),
    ("np.searchsorted(s, v)", "jnp::searchsorted(s, v)"),
    ("np.searchsorted(s, v, side='right')", "jnp::searchsorted(s, v, jnp::Side::right)"),
    ("np.searchsorted(s, a)", "jnp::searchsorted(s, a)"),
    ("np.searchsorted(np.sort(nanv), nanv)", "jnp::searchsorted(jnp::array<float>({0, 1, 2, 2, NAN, NAN}), nanv)"),
    ("np.searchsorted(np.sort(nanv), nanv, side='right')",
     "jnp::searchsorted(jnp::array<float>({0, 1, 2, 2, NAN, NAN}), nanv, jnp::Side::right)"),
    ("np.searchsorted(v, np.array([1., 4.]), sorter=np.argsort(v, kind='stable'))",
     "jnp::searchsorted(v, jnp::array<float>({1, 4}), jnp::Side::left, jnp::array<int32_t>({1, 3, 6, 0, 2, 4, 7, 5}))"),
    ("np.digitize(v, s)", "jnp::digitize(v, s)"),
    ("np.digitize(v, s, right=True)", "jnp::digitize(v, s, true)"),
    ("np.digitize(v, s[::-1])", "jnp::digitize(v, s(jx::slice(jx::none, jx::none, -1)))"),
    ("np.digitize(a, np.array([2., 5., 9.]), right=True)",
     "jnp::digitize(a, jnp::array<float>({2, 5, 9}), true)"),
    ("np.unique(v)", "jnp::unique(v)"),
    ("np.unique(m)", "jnp::unique(m)"),
    ("np.unique(v, return_index=True)[1]", "jnp::unique_all(v).indices"),
    ("np.unique(m, return_inverse=True)[1].reshape(m.shape)", "jnp::unique_all(m).inverse"),
    ("np.unique(s, return_counts=True)[1]", "jnp::unique_all(s).counts"),
    ("np.unique(nanv)", "jnp::unique(nanv)"),
]


def put_along_axis(arr, idx, vals, axis):
    arr = arr.copy()
    np.put_along_axis(arr, idx, vals, axis)
    return arr


def fmt(x):
    x = float(x)
    if np.isnan(x):
        return "NAN"
    return repr(x)


def main():
    env = dict(ENV, put_along_axis=put_along_axis)
    out = ["// Generated by tests/golden/gen_selection.py with NumPy " + np.__version__ + ". Do not edit.",
           "static const SelectionCase kSelectionCases[] = {"]
    for py, cpp in CASES:
        r = np.asarray(eval(py, env))
        out.append(f'  {{"{py}", [](const Operands& o) {{ OPERANDS; return jx::Array({cpp}); }},')
        out.append(f"   {{{', '.join(map(str, r.shape))}}}, {{{', '.join(fmt(x) for x in r.ravel())}}}}},")
    out.append("};")
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "selection_golden.inc")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
