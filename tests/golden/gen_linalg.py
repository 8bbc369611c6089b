#!/usr/bin/python3
"""Writes tests/golden/linalg_golden.inc: NumPy results for tests/numpy/linalg_test.cpp.

Run with /usr/bin/python3 (NumPy 1.24) from the repository root:
    /usr/bin/python3 tests/golden/gen_linalg.py
Each case: a function name (the test maps it to the jx call), operand shapes and values
(float64), result shape and values.
"""
import os
import numpy as np

rng = np.random.default_rng(1)


def r(*shape):
    return np.round(rng.standard_normal(shape), 3)


def spd(n, batch=()):
    a = r(*batch, n, n)
    return np.round(a @ np.swapaxes(a, -1, -2) + n * np.eye(n), 3)


def matmul_b(a, b):
    return np.matmul(a, b)


CASES = []


def case(name, fn, *ops):
    CASES.append((name, list(ops), np.asarray(fn(*ops), dtype=np.float64)))


# ---- contractions ----
case("matmul", np.matmul, r(3, 4), r(4, 5))
case("matmul", np.matmul, r(4), r(4, 5))
case("matmul", np.matmul, r(3, 4), r(4))
case("matmul", np.matmul, r(4), r(4))
case("matmul", np.matmul, r(2, 3, 4), r(4, 5))
case("matmul", np.matmul, r(2, 1, 3, 4), r(5, 4, 2))
case("matmul", np.matmul, r(1, 3, 4), r(2, 1, 4, 2))
case("matmul", np.matmul, r(2, 3, 4), r(4))
case("matmul", np.matmul, r(4), r(2, 4, 3))
case("matmul", np.matmul, r(3, 1, 2, 4), r(1, 5, 4, 3))
case("matmul", np.matmul, r(0, 2, 3), r(3, 4))
case("dot", np.dot, r(3, 4), r(4, 5))
case("dot", np.dot, r(2, 3, 4), r(5, 4, 2))
case("dot", np.dot, r(3), r(3))
case("dot", np.dot, r(2, 3), r(3))
case("dot", np.dot, r(2, 3), np.array(2.5))
case("tensordot2", lambda a, b: np.tensordot(a, b, 2), r(2, 3, 4), r(3, 4, 5))
case("tensordot1", lambda a, b: np.tensordot(a, b, 1), r(2, 3), r(3, 4))
case("tensordot0", lambda a, b: np.tensordot(a, b, 0), r(2), r(3))
case("tensordot_pairs", lambda a, b: np.tensordot(a, b, ([1, 0], [0, 2])), r(3, 4, 2), r(4, 5, 3))
case("inner", np.inner, r(2, 3), r(4, 3))
case("inner", np.inner, r(3), r(3))
case("outer", np.outer, r(2, 2), r(3))
case("vdot", np.vdot, r(2, 3), r(3, 2))
case("kron", np.kron, r(2, 3), r(3, 2))
case("kron", np.kron, r(2), r(2, 3))
case("trace", np.trace, r(3, 4))
case("trace_off1", lambda a: np.trace(a, 1), r(4, 4))
case("trace_axes12", lambda a: np.trace(a, 0, 1, 2), r(2, 3, 3))
case("vecdot", lambda a, b: np.sum(a * b, axis=-1), r(2, 3, 4), r(3, 4))
case("vecdot_axis0", lambda a, b: np.sum(a * b, axis=0), r(3, 2), r(3, 2))
# ---- linalg ----
case("det", np.linalg.det, r(3, 3))
case("det", np.linalg.det, r(2, 4, 4))
case("det", np.linalg.det, np.array([[1.0, 2.0], [2.0, 4.0]]))
case("slogdet_sign", lambda a: np.linalg.slogdet(a)[0], r(2, 3, 3))
case("slogdet_log", lambda a: np.linalg.slogdet(a)[1], r(2, 3, 3))
case("inv", np.linalg.inv, r(4, 4))
case("inv", np.linalg.inv, r(2, 3, 3))
case("solve", np.linalg.solve, r(3, 3), r(3, 2))
case("solve_vec", lambda a, b: np.linalg.solve(a, b), r(4, 4), r(4))
case("solve", lambda a, b: np.linalg.solve(a, np.broadcast_to(b, (2, 3, 2))), r(2, 3, 3), r(3, 2))
case("cholesky", np.linalg.cholesky, spd(4))
case("cholesky", np.linalg.cholesky, spd(3, (2,)))
case("qr_r", lambda a: np.linalg.qr(a)[1], r(5, 3))
case("qr_r", lambda a: np.linalg.qr(a)[1], r(3, 5))
case("qr_q", lambda a: np.linalg.qr(a)[0], r(4, 4))
case("eigvalsh", np.linalg.eigvalsh, spd(5))
# jnp symmetrizes its input ((a + a^T) / 2) where NumPy reads one triangle.
case("eigvalsh", lambda a: np.linalg.eigvalsh((a + a.T) / 2), r(4, 4))
case("svdvals", lambda a: np.linalg.svd(a, compute_uv=False), r(5, 3))
case("svdvals", lambda a: np.linalg.svd(a, compute_uv=False), r(2, 3, 6))
case("pinv", np.linalg.pinv, r(4, 3))
case("pinv", np.linalg.pinv, r(2, 5))
case("lstsq_x", lambda a, b: np.linalg.lstsq(a, b, rcond=None)[0], r(6, 3), r(6, 2))
case("lstsq_x", lambda a, b: np.linalg.lstsq(a, b, rcond=None)[0], r(6, 3), r(6))
case("lstsq_resid", lambda a, b: np.linalg.lstsq(a, b, rcond=None)[1], r(6, 3), r(6, 2))
case("matrix_power3", lambda a: np.linalg.matrix_power(a, 3), r(3, 3))
case("matrix_power0", lambda a: np.linalg.matrix_power(a, 0), r(2, 2, 2))
case("matrix_power-2", lambda a: np.linalg.matrix_power(a, -2), r(3, 3))
case("matrix_rank", np.linalg.matrix_rank, r(4, 2) @ r(2, 5))
case("matrix_rank", np.linalg.matrix_rank, r(3, 3))
case("norm", np.linalg.norm, r(3, 4))
case("norm", np.linalg.norm, r(5))
case("norm_inf", lambda a: np.linalg.norm(a, np.inf), r(5))
case("norm_1", lambda a: np.linalg.norm(a, 1), r(5))
case("norm_0", lambda a: np.linalg.norm(a, 0), np.array([1.0, 0.0, 2.0, 0.0]))
case("norm_3", lambda a: np.linalg.norm(a, 3), r(5))
case("norm_fro", lambda a: np.linalg.norm(a, "fro"), r(3, 4))
case("norm_nuc", lambda a: np.linalg.norm(a, "nuc"), r(3, 4))
case("norm_2", lambda a: np.linalg.norm(a, 2), r(3, 4))
case("norm_-2", lambda a: np.linalg.norm(a, -2), r(4, 3))
case("norm_1", lambda a: np.linalg.norm(a, 1), r(3, 4))
case("norm_-1", lambda a: np.linalg.norm(a, -1), r(3, 4))
case("norm_inf", lambda a: np.linalg.norm(a, np.inf), r(3, 4))
case("norm_-inf", lambda a: np.linalg.norm(a, -np.inf), r(3, 4))
case("norm_axis1", lambda a: np.linalg.norm(a, axis=1), r(3, 4))
case("norm_axis01_keep", lambda a: np.linalg.norm(a, axis=(0, 1), keepdims=True), r(3, 4, 2))


def fmt(vals):
    return "{" + ", ".join(repr(float(v)) for v in np.ravel(vals)) + "}"


def main():
    lines = []
    for name, ops, out in CASES:
        shp = "{" + ", ".join("{" + ", ".join(str(d) for d in np.shape(o)) + "}" for o in ops) + "}"
        vals = "{" + ", ".join(fmt(o) for o in ops) + "}"
        oshape = "{" + ", ".join(str(d) for d in out.shape) + "}"
        lines.append('{"%s", %s, %s, %s, %s},' % (name, shp, vals, oshape, fmt(out)))
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "linalg_golden.inc")
    with open(path, "w") as f:
        f.write("// Generated by tests/golden/gen_linalg.py with NumPy %s. Do not edit.\n" % np.__version__)
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
