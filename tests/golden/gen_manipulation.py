#!/usr/bin/python3
"""Writes tests/golden/manipulation_golden.inc: NumPy results for jnp manipulation tests.

Run with /usr/bin/python3 (NumPy 1.24). Each line is {"name", {shape}, {values}}; the test
(tests/numpy/manipulation_test.cpp) builds the same inputs with jx and looks results up by
name. Inputs come from val(i) = ((7 i) mod 11 - 5) / 2 over arange, so both sides agree.
"""
import os

import numpy as np


def val(n):
    i = np.arange(n)
    return ((7 * i) % 11 - 5) / 2.0


A = val(24).reshape(2, 3, 4)  # the C++ test builds these as float32
B = val(24).reshape(4, 6)
V = val(7)
S = val(3).reshape(1, 3, 1)
I = ((7 * np.arange(24)) % 11 - 5).reshape(4, 6).astype(np.int32)  # int32 input

cases = []


def add(name, x):
    cases.append((name, np.asarray(x)))


def add_list(name, xs):
    for k, x in enumerate(xs):
        add(f"{name}_{k}", x)


# shapes and axes
add("reshape_a_4_m1", A.reshape(4, -1))
add("ravel_a", A.ravel())
add("transpose_a", A.transpose())
add("transpose_a_102", A.transpose(1, 0, 2))
add("swapaxes_a_0_2", np.swapaxes(A, 0, 2))
add("moveaxis_a_0_m1", np.moveaxis(A, 0, -1))
add("moveaxis_a_01_m1m2", np.moveaxis(A, [0, 1], [-1, -2]))
add("expand_dims_a_0_3", np.expand_dims(A, (0, 3)))
add("squeeze_s", np.squeeze(S))
add("squeeze_s_2", np.squeeze(S, 2))
add("matrix_transpose_a", np.swapaxes(A, -1, -2))
add("broadcast_to_v", np.broadcast_to(V, (2, 7)))

# joining
add("concatenate_aa_1", np.concatenate([A, A], axis=1))
add("concatenate_ab_none", np.concatenate([A, B], axis=None))
add("stack_bb_1", np.stack([B, B], axis=1))
add("stack_bb_m1", np.stack([B, B], axis=-1))
add("hstack_vv", np.hstack([V, V]))
add("hstack_bb", np.hstack([B, B]))
add("vstack_vv", np.vstack([V, V]))
add("dstack_bb", np.dstack([B, B]))
add("column_stack_vv", np.column_stack([V, V]))

# splitting
add_list("split_b_3_1", np.split(B, 3, axis=1))
add_list("array_split_v_3", np.array_split(V, 3))
add_list("split_v_2_5", np.split(V, [2, 5]))
add_list("split_v_m2_10", np.split(V, [-2, 10]))
add_list("hsplit_b_2", np.hsplit(B, 2))
add_list("vsplit_b_1_3", np.vsplit(B, [1, 3]))
add_list("array_split_a_2_2", np.array_split(A, 2, axis=2))

# tiling and repeating
add("tile_v_2", np.tile(V, 2))
add("tile_b_212", np.tile(B, (2, 1, 2)))
add("tile_a_0", np.tile(A, 0))
add("repeat_b_2", np.repeat(B, 2))
add("repeat_b_2_1", np.repeat(B, 2, axis=1))
add("repeat_v_per_elem", np.repeat(V, [1, 0, 2, 2, 3, 1, 0], axis=0))
add("repeat_b_0123_0", np.repeat(B, [0, 1, 2, 3], axis=0))

# padding
add("pad_v_constant_2", np.pad(V, 2))
add("pad_b_constant_12_3", np.pad(B, (1, 2), constant_values=3))
add("pad_b_constant_per_axis", np.pad(B, ((1, 2), (3, 0)), constant_values=((1, 2), (3, 4))))
add("pad_b_constant_pair", np.pad(B, 1, constant_values=(7, 8)))


def pad_wrap(x, widths):
    """Periodic wrap, as JAX (and NumPy >= 2). NumPy 1.24's np.pad(mode="wrap") is not
    periodic when a pad is wider than the axis, so the golden uses the definition."""
    for axis, (b, a) in enumerate(widths):
        n = x.shape[axis]
        x = np.take(x, np.arange(-b, n + a) % n, axis=axis)
    return x


assert (pad_wrap(B, ((1, 2), (3, 1))) == np.pad(B, ((1, 2), (3, 1)), mode="wrap")).all()
for mode in ["edge", "wrap", "reflect", "symmetric"]:
    pad = (lambda x, w: pad_wrap(x, w)) if mode == "wrap" else (
        lambda x, w, m=mode: np.pad(x, w, mode=m))
    add(f"pad_v_{mode}_3_10", pad(V, ((3, 10),)))
    add(f"pad_b_{mode}_2_5", pad(B, ((2, 5), (5, 1))))
    add(f"pad_a_{mode}_1", pad(A, ((1, 1),) * 3))
add("pad_v_reflect_odd", np.pad(V, (3, 10), mode="reflect", reflect_type="odd"))
add("pad_v_symmetric_odd", np.pad(V, (3, 10), mode="symmetric", reflect_type="odd"))
add("pad_b_reflect_odd", np.pad(B, ((2, 5), (5, 1)), mode="reflect", reflect_type="odd"))
one = np.array([[2.5, -1.0, 4.0]])  # an axis of size 1
add("pad_one_reflect", np.pad(one, ((2, 3), (1, 2)), mode="reflect"))
add("pad_one_symmetric_odd", np.pad(one, ((2, 3), (1, 2)), mode="symmetric", reflect_type="odd"))
add("pad_v_linear_ramp", np.pad(V, (3, 4), mode="linear_ramp"))
add("pad_b_linear_ramp_ends", np.pad(B, ((2, 1), (3, 2)), mode="linear_ramp",
                                     end_values=((1, -2), (5, 0.5))))
for mode in ["maximum", "minimum", "mean", "median"]:
    add(f"pad_b_{mode}", np.pad(B, ((1, 2), (2, 1)), mode=mode))
    add(f"pad_b_{mode}_stat2", np.pad(B, ((1, 2), (2, 1)), mode=mode, stat_length=2))
    add(f"pad_i_{mode}_stat3", np.pad(I, ((2, 1), (1, 3)), mode=mode, stat_length=((3, 2), (3, 4))))

# flipping and rolling
add("flip_a", np.flip(A))
add("flip_a_1", np.flip(A, 1))
add("flip_a_02", np.flip(A, (0, 2)))
add("fliplr_b", np.fliplr(B))
add("flipud_b", np.flipud(B))
add("roll_v_3", np.roll(V, 3))
add("roll_v_m10", np.roll(V, -10))
add("roll_b_2_none", np.roll(B, 2))
add("roll_b_1m2_01", np.roll(B, (1, -2), axis=(0, 1)))
add("roll_b_1_01", np.roll(B, 1, axis=(0, 1)))
add("roll_a_11_2", np.roll(A, (1, 1), axis=2))
add("rot90_b", np.rot90(B))
add("rot90_b_2", np.rot90(B, 2))
add("rot90_b_3", np.rot90(B, 3))
add("rot90_b_m1", np.rot90(B, -1))
add("rot90_a_1_12", np.rot90(A, 1, (1, 2)))


def fmt(v):
    return repr(float(v))


out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "manipulation_golden.inc")
with open(out, "w") as f:
    f.write("// Generated by tests/golden/gen_manipulation.py (NumPy %s); do not edit.\n"
            % np.__version__)
    for name, x in cases:
        shape = ", ".join(str(d) for d in x.shape)
        values = ", ".join(fmt(v) for v in x.ravel())
        f.write('{"%s", {%s}, {%s}},\n' % (name, shape, values))
print("wrote", out, len(cases), "cases")
