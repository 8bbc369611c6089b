#!/usr/bin/python3
"""PyTorch's side of bench/bench_windowed.cpp: max pooling 2x2 stride 2 over a
[128, 32, 28, 28] float32 tensor in channels_last memory format (the NHWC layout of jx's
[128, 28, 28, 32] operand), forward alone (no_grad) and forward + backward
(y.backward(g), x.grad cleared each time). Timed as torch_foundation.py times: the median
of 5 runs of `reps` calls after 3 warm-up calls.
Run: OMP_NUM_THREADS=2 GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967295 \
     /usr/bin/python3 bench/peers/torch_windowed.py --threads 2"""
import argparse
import json
import os
import time

ap = argparse.ArgumentParser()
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--reps", type=int, default=50)
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
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        runs.append((time.perf_counter() - t0) / reps)
    runs.sort()
    return runs[len(runs) // 2]


torch.manual_seed(1)
x = (torch.rand(128, 32, 28, 28) * 2 - 1).contiguous(memory_format=torch.channels_last)
x.requires_grad_(True)
g = torch.ones(128, 32, 14, 14).contiguous(memory_format=torch.channels_last)


def fwd():
    with torch.no_grad():
        return F.max_pool2d(x, 2, 2)


def fwd_bwd():
    x.grad = None
    y = F.max_pool2d(x, 2, 2)
    y.backward(g)


assert F.max_pool2d(x, 2, 2).is_contiguous(memory_format=torch.channels_last)
res = {"maxpool_fwd_ms": timeit(fwd, args.reps) * 1e3, "maxpool_fwd_bwd_ms": timeit(fwd_bwd, args.reps) * 1e3}
print(json.dumps(res))
if args.json:
    with open(args.json, "w") as f:
        json.dump(res, f)
