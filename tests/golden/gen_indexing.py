#!/usr/bin/python3
"""Writes tests/golden/indexing_golden.inc: NumPy's results for index expressions
(x[idx]) and in-bounds functional updates (x.at[idx].set/add/...), as C++ initializers
for tests/numpy/indexing_test.cpp. Run: /usr/bin/python3 tests/golden/gen_indexing.py

Each case is written once, here, as a tuple of index items; this script renders the
same tuple as a NumPy index and as jx C++ arguments. Only in-bounds indices appear
(NumPy raises on out-of-bounds ones; JAX's clamping is tested by hand in the test)."""
import os
import numpy as np

X = {  # operands, by name in the test
    "x4": np.arange(120, dtype=np.int32).reshape(2, 3, 4, 5),
    "x2": np.arange(20, dtype=np.int32).reshape(4, 5),
    "x1": np.arange(10, dtype=np.int32),
}


class A:
    """An index array literal (becomes a jnp::array in C++)."""
    def __init__(self, v, dtype=np.int32):
        self.v = np.array(v, dtype=dtype)


def S(*a):
    return slice(*a)


def cpp_item(i):
    if i is None:
        return "jx::newaxis"
    if i is Ellipsis:
        return "jx::ellipsis"
    if isinstance(i, int):
        return str(i)
    if isinstance(i, slice):
        f = lambda v: "jx::none" if v is None else str(v)
        return f"jx::slice({f(i.start)}, {f(i.stop)}, {f(i.step)})"
    if isinstance(i, list):
        return "std::vector<int64_t>{" + ", ".join(map(str, i)) + "}"
    if isinstance(i, A):
        v = i.v
        if v.dtype == np.bool_:
            vals = ", ".join("true" if b else "false" for b in v.ravel())
            return f"jnp::array<bool>({{{vals}}}, jx::Shape{{{', '.join(map(str, v.shape))}}})"
        vals = ", ".join(map(str, v.ravel()))
        return f"jnp::array<int32_t>({{{vals}}}, jx::Shape{{{', '.join(map(str, v.shape))}}})"
    raise TypeError(i)


def np_item(i):
    return i.v if isinstance(i, A) else (np.array(i, dtype=np.int64) if isinstance(i, list) else i)


def py_item(i):
    if i is None:
        return "None"
    if i is Ellipsis:
        return "..."
    if isinstance(i, slice):
        f = lambda v: "" if v is None else str(v)
        s = f"{f(i.start)}:{f(i.stop)}"
        return s + (f":{i.step}" if i.step is not None else "")
    if isinstance(i, A):
        return "array(" + str(i.v.tolist()).replace(" ", "") + ")"
    return str(i).replace(" ", "")


GET = [
    # basic: ints, slices, newaxis, ellipsis
    ("x4", (1,)), ("x4", (-1,)), ("x4", (0, 2)), ("x4", (1, -1, 3, 4)), ("x4", (S(None),)),
    ("x4", (S(None), S(1, 3))), ("x4", (Ellipsis, 2)), ("x4", (None,)), ("x4", (S(None, None, 2),)),
    ("x4", (S(None, None, -1),)), ("x4", (S(None), S(None), S(3, 0, -1))), ("x4", (1, None, S(None, None, -2))),
    ("x4", (Ellipsis, None)), ("x4", (None, Ellipsis, None, 1)), ("x4", (0, Ellipsis, S(1, 4, 2))),
    ("x4", (S(None), 1, S(None), -2)), ("x4", (Ellipsis,)), ("x4", (S(1, 2), S(None, None, -1), 0)),
    ("x2", (S(-3, None),)), ("x2", (S(None), S(-100, 100))), ("x2", (S(3, 1),)), ("x2", (S(None, None, 3), S(4, None, -2))),
    ("x1", (S(2, 8, 3),)), ("x1", (S(-3, None),)), ("x1", (S(None, None, -3),)), ("x1", (S(8, 2, -2),)),
    ("x1", (S(None, 5), None)), ("x1", (None, S(None, None, 4), None)),
    # advanced: int arrays, lists, broadcasting, placement
    ("x1", ([],)), ("x1", ([3, -1, 0, 3],)), ("x2", ([2, 0],)), ("x2", (S(None), [4, 0, 1])),
    ("x2", ([0, 3], [4, 0])), ("x2", (A([[0, 1], [3, 2]]),)), ("x2", (A([[0], [2]]), A([1, 3, 4]))),
    ("x4", ([0, 1],)), ("x4", ([1, 0, 1],)), ("x4", (S(None), [2, 0])), ("x4", ([0, 1], [2, 1])),
    ("x4", ([0, 1], S(None), [3, 2])), ("x4", (S(None), [0, 2], [1, 3])), ("x4", (1, S(None), [0, 2])),
    ("x4", (S(None), 1, [0, 2])), ("x4", (Ellipsis, [0, -1])), ("x4", (A([[0, 1], [1, 0]]),)),
    ("x4", (S(None), A([[0], [2]]), A([1, 3]))), ("x4", ([0, 1], None, [1, 2])), ("x4", (None, [0, 1])),
    ("x4", ([1, 0], S(None, None, -1))), ("x4", (Ellipsis, [1, 2], S(None, None, 2))),
    ("x4", (0, [2, 1], Ellipsis, [4, 0])), ("x4", (S(None), S(None), A([[3, 1]]), 2)),
    ("x4", ([1], [2], [3], [4])), ("x4", (S(None, 1), [0, 2, 1], S(1, 3), None)),
    # boolean masks
    ("x1", (A([True, False] * 5, np.bool_),)),
    ("x2", (A([[True, False, True, False, False]] * 2 + [[False] * 5, [True] * 5], np.bool_),)),
    ("x2", (A([False, True, True, False], np.bool_),)), ("x2", (S(None), A([1, 0, 0, 1, 1], np.bool_))),
    ("x4", (A([[True, False, True], [False, False, True]], np.bool_),)),
    ("x4", (Ellipsis, A([True, False, False, True, True], np.bool_))),
    ("x4", (1, S(None), A([False, True, True, False], np.bool_))),
    ("x4", (S(None), A([True, False, True], np.bool_), [0, 3])),
]

# (operand, index, op, values): NumPy's x[idx] = v, or ufunc.at for accumulating ops.
AT = [
    ("x1", (2,), "set", 100), ("x1", (S(1, 8, 3),), "set", -5), ("x1", ([0, 9, 4],), "set", A([7, 8, 9])),
    ("x1", ([1, 1, 1],), "add", 10), ("x1", ([2, 5, 2, 2],), "add", A([1, 2, 3, 4])),
    ("x1", (S(None, None, -2),), "add", A([1, 2, 3, 4, 5])), ("x1", ([3, 3],), "multiply", 3),
    ("x1", ([4, 4, 6],), "min", A([2, 9, 1])), ("x1", ([4, 4, 6],), "max", A([20, 9, 1])),
    ("x2", (1,), "set", A([1, 2, 3, 4, 5])), ("x2", (S(None), 2), "set", 0), ("x2", (S(1, 3), S(None, None, 2)), "add", 100),
    ("x2", ([0, 0, 3], [1, 1, 2]), "add", A([5, 6, 7])), ("x2", ([2, 0],), "set", A([[9], [8]])),
    ("x2", (A([True, False, True, False], np.bool_),), "set", 0), ("x2", (Ellipsis, None, 0), "subtract", 1),
    ("x4", (1, S(None), [0, 3]), "set", A([1, 2, 3, 4, 5])), ("x4", ([0, 1], S(None), [3, 2]), "add", 1000),
    ("x4", (S(None), S(None), S(None), [4, 0]), "multiply", 2), ("x4", (Ellipsis, 0), "max", 50),
]

UFUNC = {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum,
         "subtract": np.subtract}


def render_idx(idx):
    return ", ".join(cpp_item(i) for i in idx)


def values_cpp(v):
    if isinstance(v, A):
        return cpp_item(v)
    return f"jx::Array({v})"


def main():
    out = ["// Generated by tests/golden/gen_indexing.py with NumPy " + np.__version__ + ". Do not edit.",
           "// {name, operand, f, expected shape, expected values}"]
    out.append("static const IndexCase kGetCases[] = {")
    for name, idx in GET:
        r = X[name][tuple(np_item(i) for i in idx)]
        py = f"{name}[{', '.join(py_item(i) for i in idx)}]"
        out.append(f'  {{"{py}", "{name}", [](const jx::Array& x) {{ return x({render_idx(idx)}); }},')
        out.append(f"   {{{', '.join(map(str, r.shape))}}}, {{{', '.join(map(str, r.ravel().tolist()))}}}}},")
    out.append("};")
    out.append("static const IndexCase kAtCases[] = {")
    for name, idx, op, v in AT:
        x = X[name].copy()
        key = tuple(np_item(i) for i in idx)
        vv = v.v if isinstance(v, A) else v
        if op == "set":
            x[key] = vv
        else:
            UFUNC[op].at(x, key, vv)
        py = f"{name}.at[{', '.join(py_item(i) for i in idx)}].{op}({py_item(v)})"
        out.append(f'  {{"{py}", "{name}", [](const jx::Array& x) {{ return x.at({render_idx(idx)}).{op}({values_cpp(v)}); }},')
        out.append(f"   {{{', '.join(map(str, x.shape))}}}, {{{', '.join(map(str, x.ravel().tolist()))}}}}},")
    out.append("};")
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "indexing_golden.inc")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
