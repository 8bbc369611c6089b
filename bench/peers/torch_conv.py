#!/usr/bin/python3
"""PyTorch's side of bench/bench_conv.cpp: the tutorial CNN's two conv layers at batch 128
(28x28x1 -> 32 and 14x14x32 -> 64, 3x3, padding 1 = SAME), forward alone and forward plus
both backward passes (input and weight gradients, no bias), in NCHW and channels_last; the
best layout is PyTorch's number. Run through bench/conv.sh."""
import argparse
import json
import os
import time

ap = argparse.ArgumentParser()
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--json", default="")
args = ap.parse_args()
os.environ["OMP_NUM_THREADS"] = str(args.threads)
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

torch.set_num_threads(args.threads)


def timeit(fn, reps, warm=3):
    for _ in range(warm):
        fn()
    runs = []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        runs.append((time.perf_counter() - t0) / reps)
    runs.sort()
    return runs[len(runs) // 2]


res = {}
for name, (n, h, c, o) in {"layer1": (128, 28, 1, 32), "layer2": (128, 14, 32, 64)}.items():
    best_fwd = best_all = float("inf")
    for fmt in (torch.contiguous_format, torch.channels_last):
        x = torch.randn(n, c, h, h).contiguous(memory_format=fmt).requires_grad_(True)
        w = torch.randn(o, c, 3, 3).contiguous(memory_format=fmt).requires_grad_(True)
        ct = torch.randn(n, o, h, h).contiguous(memory_format=fmt)

        def fwd():
            with torch.no_grad():
                return F.conv2d(x, w, padding=1)

        def fwd_bwd():
            y = F.conv2d(x, w, padding=1)
            return torch.autograd.grad(y, (x, w), ct)

        t_fwd, t_all = timeit(fwd, 10), timeit(fwd_bwd, 5)
        res[f"{name}_{'nhwc' if fmt == torch.channels_last else 'nchw'}_fwd_ms"] = t_fwd * 1e3
        res[f"{name}_{'nhwc' if fmt == torch.channels_last else 'nchw'}_fwd_bwd_ms"] = t_all * 1e3
        best_fwd, best_all = min(best_fwd, t_fwd), min(best_all, t_all)
    res[f"{name}_fwd_ms"] = best_fwd * 1e3
    res[f"{name}_fwd_bwd_ms"] = best_all * 1e3
    res[f"{name}_fwd_GFLOPs"] = 2 * n * h * h * c * o * 9 / best_fwd / 1e9
for k, v in res.items():
    print(f"{k:28s} {v:10.3f}")
if args.json:
    with open(args.json, "w") as f:
        json.dump(res, f, indent=1)
