#!/usr/bin/python3
"""Writes tests/golden/optim_schedules_golden.inc: reference values of Optax's schedules
(optax/schedules/_schedule.py and _join.py) for tests/optim/schedules_test.cpp.

Optax cannot be installed here, so each schedule is re-implemented below in NumPy float64,
directly from Optax's documented formulas (clipping, staircase, transition_begin, end_value,
and what happens before step 0 and past the end), independently of jx's C++ code.

Run with /usr/bin/python3 (NumPy 1.24) from the repository root:
    /usr/bin/python3 tests/golden/gen_optim_schedules.py
Rows are NamedGolden {"name", {shape}, {values}} (tests/testing/golden.h); every row but
"steps" holds one schedule's values at the steps of the "steps" row.
"""
import math
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "optim_schedules_golden.inc")

# Negative counts, 0, every boundary used below and one step either side, and far past the end.
STEPS = np.array([-60, -25, -5, -1, 0, 1, 2, 4, 5, 6, 9, 10, 11, 14, 15, 16, 19, 20, 21, 25,
                  29, 30, 31, 35, 49, 50, 51, 60, 70, 84, 85, 86, 99, 100, 101, 105, 150, 1000],
                 dtype=np.int64)

ROWS = []


def add(name, values):
    values = np.broadcast_to(np.asarray(values, dtype=np.float64), STEPS.shape)
    ROWS.append('{"%s", {%d}, {%s}},' % (name, values.size, ", ".join(repr(float(v)) for v in values)))


# ---- Optax's formulas, in NumPy ----

def constant(value):
    return lambda t: np.full(t.shape, float(value))


def polynomial(init, end, power, transition_steps, transition_begin=0):
    if transition_steps <= 0:
        return constant(init)
    transition_begin = max(transition_begin, 0)

    def f(t):
        c = np.clip(t - transition_begin, 0, transition_steps)
        return (init - end) * (1 - c / transition_steps) ** power + end
    return f


def linear(init, end, transition_steps, transition_begin=0):
    return polynomial(init, end, 1, transition_steps, transition_begin)


def piecewise_constant(init, boundaries_and_scales):
    def f(t):
        v = np.full(t.shape, float(init))
        for threshold, scale in sorted(boundaries_and_scales.items()):
            v = np.where(t >= threshold, v * scale, v)  # the scale applies from the boundary on
        return v
    return f


def piecewise_interpolate(kind, init, boundaries_and_scales):
    items = sorted(boundaries_and_scales.items())
    bounds = [0] + [b for b, _ in items]
    values = [float(init)]
    for _, s in items:
        values.append(values[-1] * s)

    def f(t):
        out = np.where(t >= bounds[-1], values[-1], 0.0)  # 0 before step 0
        for i in range(len(bounds) - 1):
            size = max(bounds[i + 1] - bounds[i], 1)
            pct = (t - bounds[i]) / size
            a, b = values[i], values[i + 1]
            if kind == "linear":
                v = a + (b - a) * pct
            else:
                v = b + (a - b) / 2 * (np.cos(math.pi * pct) + 1)
            out = np.where((bounds[i] <= t) & (t < bounds[i + 1]), v, out)
        return out
    return f


def exponential(init, transition_steps, rate, transition_begin=0, staircase=False, end=None):
    if transition_steps <= 0 or rate == 0:
        return constant(init)
    transition_begin = max(transition_begin, 0)

    def f(t):
        d = t - transition_begin
        p = d / transition_steps
        if staircase:
            p = np.floor(p)
        v = np.where(d <= 0, init, init * rate ** p)
        if end is not None:
            v = np.maximum(v, end) if rate < 1 else np.minimum(v, end)
        return v
    return f


def cosine(init, decay_steps, alpha=0.0, exponent=1.0):
    def f(t):
        c = np.minimum(t, decay_steps)  # not clipped below: cos is even
        d = 0.5 * (1 + np.cos(math.pi * c / decay_steps))
        return init * ((1 - alpha) * d ** exponent + alpha)
    return f


def join(schedules, boundaries):
    def f(t):
        out = schedules[0](t)
        for b, s in zip(boundaries, schedules[1:]):
            out = np.where(t < b, out, s(t - b))
        return out
    return f


def warmup_cosine(init, peak, warmup, decay_steps, end=0.0, exponent=1.0):
    alpha = 0.0 if peak == 0 else end / peak
    return join([linear(init, peak, warmup), cosine(peak, decay_steps - warmup, alpha, exponent)],
                [warmup])


def warmup_exponential(init, peak, warmup, transition_steps, rate, transition_begin=0,
                       staircase=False, end=None):
    return join([linear(init, peak, warmup),
                 exponential(peak, transition_steps, rate, transition_begin, staircase, end)],
                [warmup])


def sgdr(cycles):
    schedules, boundaries, step = [], [], 0
    for c in cycles:
        schedules.append(warmup_cosine(**c))
        step += c["decay_steps"]
        boundaries.append(step)
    return join(schedules, boundaries[:-1])


def linear_onecycle(T, peak, pct_start=0.3, pct_final=0.85, div=25.0, final_div=1e4):
    return piecewise_interpolate("linear", peak / div, {int(pct_start * T): div,
                                                        int(pct_final * T): 1.0 / div,
                                                        T: 1.0 / final_div})


def cosine_onecycle(T, peak, pct_start=0.3, div=25.0, final_div=1e4):
    return piecewise_interpolate("cosine", peak / div, {int(pct_start * T): div,
                                                        int(T): 1.0 / (div * final_div)})


CASES = [
    ("constant", constant(0.5)),
    ("linear", linear(1.0, 0.01, 100)),
    ("linear_begin", linear(0.1, 1.0, 30, transition_begin=10)),
    ("linear_no_steps", linear(0.7, 0.1, 0)),
    ("polynomial_p2_begin5", polynomial(1.0, 0.01, 2.0, 100, transition_begin=5)),
    ("polynomial_p0p5_negative_begin", polynomial(2.0, 0.5, 0.5, 50, transition_begin=-10)),
    ("exponential", exponential(1.0, 10, 0.5)),
    ("exponential_staircase_begin", exponential(1.0, 10, 0.5, transition_begin=5, staircase=True)),
    ("exponential_end_floor", exponential(1.0, 10, 0.5, end=0.2)),
    ("exponential_growth_end_ceiling", exponential(0.5, 20, 2.0, transition_begin=10, end=3.0)),
    ("exponential_rate0", exponential(0.3, 10, 0.0)),
    ("cosine", cosine(1.0, 100)),
    ("cosine_alpha", cosine(2.0, 50, alpha=0.1)),
    ("cosine_exponent", cosine(1.0, 100, alpha=0.05, exponent=2.0)),
    ("warmup_cosine", warmup_cosine(0.0, 1.0, 10, 100, end=0.1)),
    ("warmup_cosine_exponent", warmup_cosine(0.1, 2.0, 20, 85, end=0.0, exponent=1.5)),
    ("warmup_constant", linear(0.1, 1.0, 20)),  # warmup_constant_schedule is this linear
    ("warmup_exponential", warmup_exponential(0.0, 1.0, 10, 20, 0.5)),
    ("warmup_exponential_full", warmup_exponential(0.0, 1.0, 10, 20, 0.5, transition_begin=5,
                                                   staircase=True, end=0.05)),
    ("piecewise_constant", piecewise_constant(1.0, {10: 0.5, 20: 0.1, 50: 2.0})),
    ("piecewise_constant_empty", piecewise_constant(0.25, {})),
    ("piecewise_linear", piecewise_interpolate("linear", 1.0, {10: 0.5, 30: 0.1, 100: 0.5})),
    ("piecewise_cosine", piecewise_interpolate("cosine", 1.0, {10: 0.5, 30: 0.1, 100: 0.5})),
    ("piecewise_linear_empty", piecewise_interpolate("linear", 0.3, {})),
    ("join", join([constant(1.0), linear(1.0, 0.0, 10), constant(0.3)], [10, 30])),
    ("sgdr", sgdr([dict(init=0.0, peak=1.0, warmup=5, decay_steps=30),
                   dict(init=0.1, peak=0.5, warmup=0, decay_steps=20, end=0.05),
                   dict(init=0.0, peak=0.2, warmup=10, decay_steps=50, exponent=2.0)])),
    ("linear_onecycle", linear_onecycle(100, 1.0)),
    ("linear_onecycle_args", linear_onecycle(50, 2.0, pct_start=0.2, pct_final=0.6, div=10.0,
                                             final_div=100.0)),
    ("linear_onecycle_short", linear_onecycle(1, 1.0)),  # boundaries 0, 0, 1 collide
    ("cosine_onecycle", cosine_onecycle(100, 1.0)),
    ("cosine_onecycle_args", cosine_onecycle(30, 0.5, pct_start=0.5, div=5.0, final_div=50.0)),
]


def main():
    add("steps", STEPS)
    t = STEPS.astype(np.float64)
    for name, f in CASES:
        add(name, f(t))
    with open(OUT, "w") as out:
        out.write("// Generated by tests/golden/gen_optim_schedules.py (NumPy %s); do not edit.\n"
                  % np.__version__)
        out.write("\n".join(ROWS) + "\n")


if __name__ == "__main__":
    main()
