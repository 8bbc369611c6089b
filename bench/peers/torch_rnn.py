#!/usr/bin/python3
"""PyTorch's side of bench/bench_control.cpp: the tanh RNN h <- tanh(h @ W + x_t @ U + b),
hidden 64, input 64, batch 32, 100 steps, loss = sum(h_T^2), forward + backward w.r.t.
W, U, b, as an eager Python loop with autograd (what a PyTorch user writes; no
torch.jit). Timed 5 times (20 calls each), the median kept, as torch_foundation.py does.

With --jx bench_control.json (the --benchmark_format=json output of bench_control, run in
the same session) it also prints the rows of bench/README.md with the ratios."""
import argparse
import json
import os
import statistics
import time

ap = argparse.ArgumentParser()
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--jx", default="", help="bench_control's JSON: print the comparison rows")
args = ap.parse_args()
os.environ["OMP_NUM_THREADS"] = str(args.threads)
import torch  # noqa: E402

torch.set_num_threads(args.threads)
HIDDEN, INPUT, BATCH, STEPS = 64, 64, 32, 100

g = torch.Generator().manual_seed(0)
W = ((torch.rand(HIDDEN, HIDDEN, generator=g) * 2 - 1) * 0.15).requires_grad_()
U = ((torch.rand(INPUT, HIDDEN, generator=g) * 2 - 1) * 0.15).requires_grad_()
b = ((torch.rand(HIDDEN, generator=g) * 2 - 1) * 0.1).requires_grad_()
h0 = torch.zeros(BATCH, HIDDEN)
xs = torch.rand(STEPS, BATCH, INPUT, generator=g) * 2 - 1


def step():
    h = h0
    for t in range(STEPS):
        h = torch.tanh(h @ W + xs[t] @ U + b)
    loss = (h * h).sum()
    gW, gU, gb = torch.autograd.grad(loss, (W, U, b))
    return loss, gW, gU, gb


def timed(fn, calls=20, reps=5):
    fn()
    runs = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        runs.append((time.perf_counter() - t0) / calls)
    return statistics.median(runs)


torch_ms = timed(step) * 1e3
print(f"torch eager RNN value_and_grad: {torch_ms:.3f} ms")

if args.jx:
    with open(args.jx) as f:
        bm = {b["name"]: b for b in json.load(f)["benchmarks"]}

    def ms(name):
        b = bm[name + "/real_time"]
        scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b["time_unit"]]
        return b["real_time"] * scale

    jit, eager = ms("BM_rnn_jit"), ms("BM_rnn_eager")
    print("| workload | jx jit | jx eager | PyTorch eager | jit vs eager | jit vs PyTorch | goal |")
    print("|---|---|---|---|---|---|---|")
    print(f"| RNN 64x100 value_and_grad | {jit:.2f} ms | {eager:.2f} ms | {torch_ms:.2f} ms | "
          f"{eager / jit:.2f}x | {torch_ms / jit:.2f}x | >= 5x, >= 3x |")
    hand, fori, wh = ms("BM_newton_hand"), ms("BM_newton_fori_jit"), ms("BM_newton_while_jit")
    print(f"| Newton sqrt 1M x 20 (fori) | {fori:.2f} ms | | | hand loop {hand:.2f} ms: "
          f"{fori / hand:.2f}x | | <= 1.5x |")
    print(f"| Newton sqrt 1M (while, tol) | {wh:.2f} ms | | | | | |")
