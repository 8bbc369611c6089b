#!/usr/bin/python3
"""PyTorch's side of bench/bench_eager.cpp and bench_random.cpp, timed the same way:
dispatch of a 1-element add, add/exp/sum over 16M float32, torch.rand over 64M values,
torch.randn over 1M, 10M and 16M values (bench_random's normal rows).
Run through bench/run.sh, which sets PyTorch's best configuration on this machine."""
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

torch.set_num_threads(args.threads)


def timeit(fn, reps, warm=3):
    for _ in range(warm):
        fn()
    best = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        best.append((time.perf_counter() - t0) / reps)
    best.sort()
    return best[len(best) // 2]


res = {}
a, b = torch.ones(1), torch.ones(1)
res["dispatch_add_1elem_us"] = timeit(lambda: a + b, 20000) * 1e6
n = 16 << 20
x, y = torch.rand(n), torch.rand(n)
res["add_16M_GBps"] = 12 * n / timeit(lambda: x + y, 20) / 1e9
res["exp_16M_GBps"] = 8 * n / timeit(lambda: torch.exp(x), 20) / 1e9
res["sum_16M_GBps"] = 4 * n / timeit(lambda: torch.sum(x), 20) / 1e9
m = 64 << 20
res["rand_64M_GBps"] = 4 * m / timeit(lambda: torch.rand(m), 5) / 1e9
for label, k in (("1M", 1 << 20), ("10M", 10_000_000), ("16M", 16 << 20)):
    res[f"randn_{label}_ms"] = timeit(lambda: torch.randn(k), 5) * 1e3
for k in (256, 512, 1024, 2048):
    p, q = torch.rand(k, k), torch.rand(k, k)
    res[f"matmul_{k}_GFLOPs"] = 2 * k ** 3 / timeit(lambda: p @ q, max(2, int(2e9 / k ** 3))) / 1e9
# The MLP of bench_grad.cpp: 784-256-256-10, relu, softmax cross-entropy, batch 128.
mlp = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                          torch.nn.ReLU(), torch.nn.Linear(256, 10))
xb, yb = torch.randn(128, 784), torch.randint(0, 10, (128,))


def fwd():
    with torch.no_grad():
        return torch.nn.functional.cross_entropy(mlp(xb), yb)


def fwd_bwd():
    mlp.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(mlp(xb), yb)
    loss.backward()
    return loss


res["mlp_forward_ms"] = timeit(fwd, 50) * 1e3
res["mlp_value_and_grad_ms"] = timeit(fwd_bwd, 50) * 1e3
print(json.dumps(res, indent=1))
if args.json:
    with open(args.json, "w") as f:
        json.dump(res, f)
