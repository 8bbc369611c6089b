#!/usr/bin/python3
"""PyTorch's side of bench/bench_vmap.cpp: per-example gradients of the MLP 784-256-256-10
softmax cross-entropy loss, batch 128, written for ONE example (x [784], one-hot y [10]):
  functorch_vmap_grad  functorch.vmap(functorch.grad(loss), in_dims=(None, 0, 0))
                       (torch.func when present: PyTorch >= 2.0)
  loop_autograd        128 torch.autograd.grad calls on pre-sliced examples, each
                       parameter's gradients stacked (the same result as vmap)
  functorch_clipped_mean  DP-SGD's clipped mean as functorch users write it: vmap(grad),
                       the per-example norm over all parameters, g * min(1, C / norm),
                       mean over examples (C = 1, as bench_vmap.cpp)
Each is timed 5 times (a few calls each) and the median kept, as torch_foundation.py does.
Before timing, checks once that vmap equals the loop (max abs difference).

With --jx bench_vmap.json (the --benchmark_format=json output of bench_vmap, run in the
same session) it also prints the markdown table of bench/README.md with the ratios.
Run it at PyTorch's best configuration (see bench/run.sh, ../shared/peers/README.md)."""
import argparse
import json
import os
import statistics
import time

ap = argparse.ArgumentParser()
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--json", default="", help="write PyTorch's timings here")
ap.add_argument("--jx", default="", help="bench_vmap's JSON: print the comparison table")
args = ap.parse_args()
os.environ["OMP_NUM_THREADS"] = str(args.threads)
import torch  # noqa: E402

torch.set_num_threads(args.threads)
try:
    from torch.func import grad, vmap  # PyTorch >= 2.0
    api = "torch.func"
except ImportError:
    from functorch import grad, vmap  # Debian's PyTorch 1.13 ships functorch
    api = "functorch"

BATCH = 128
SIZES = (784, 256, 256, 10)


def timeit(fn, reps, warm=2):
    for _ in range(warm):
        fn()
    runs = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        runs.append((time.perf_counter() - t0) / reps)
    return statistics.median(runs)


g = torch.Generator().manual_seed(0)
params = []
for fan_in, fan_out in zip(SIZES[:-1], SIZES[1:]):
    params.append(torch.randn(fan_in, fan_out, generator=g) / fan_in ** 0.5)
    params.append(torch.zeros(fan_out))
params = tuple(params)
xs = torch.randn(BATCH, SIZES[0], generator=g)
ys = torch.nn.functional.one_hot(torch.randint(0, SIZES[-1], (BATCH,), generator=g), SIZES[-1]).float()


def loss(p, x, y):
    """The loss of bench_vmap.cpp, term for term: x @ w + b, relu, log-softmax, -sum(logp*y)."""
    h = x
    n = len(p) // 2
    for i in range(n):
        h = h @ p[2 * i] + p[2 * i + 1]
        if i + 1 < n:
            h = torch.relu(h)
    shifted = h - h.max().detach()
    logp = shifted - torch.log(torch.sum(torch.exp(shifted)))
    return -torch.sum(logp * y)


per_example = vmap(grad(loss), in_dims=(None, 0, 0))
x_rows, y_rows = list(xs.unbind(0)), list(ys.unbind(0))
leaf_params = tuple(t.clone().requires_grad_(True) for t in params)


def loop_autograd():
    rows = [torch.autograd.grad(loss(leaf_params, x, y), leaf_params) for x, y in zip(x_rows, y_rows)]
    return tuple(torch.stack(col) for col in zip(*rows))


def vmap_grad():
    return per_example(params, xs, ys)


CLIP = 1.0


def clipped_mean():
    """bench_vmap.cpp's clipped_mean, term for term."""
    g = per_example(params, xs, ys)
    norm2 = sum(torch.sum(torch.square(t), dim=tuple(range(1, t.dim()))) for t in g)
    scale = torch.clamp(CLIP / (torch.sqrt(norm2) + 1e-6), max=1.0)
    return tuple(torch.mean(t * scale.reshape((-1,) + (1,) * (t.dim() - 1)), dim=0) for t in g)


want, got = loop_autograd(), vmap_grad()
diff = max((a - b).abs().max().item() for a, b in zip(got, want))
res = {
    "api": api,
    "torch_version": torch.__version__,
    "threads": args.threads,
    "max_abs_diff_vmap_vs_loop": diff,
    "functorch_vmap_grad_ms": timeit(vmap_grad, 5) * 1e3,
    "loop_autograd_ms": timeit(loop_autograd, 1, warm=1) * 1e3,
    "functorch_clipped_mean_ms": timeit(clipped_mean, 5) * 1e3,
}
if args.json:
    with open(args.json, "w") as f:
        json.dump(res, f)
elif not args.jx:
    print(json.dumps(res, indent=1))


def jx_medians(path):
    """bench_vmap's real times in ms: the median aggregate when run with repetitions."""
    with open(path) as f:
        bench = json.load(f)["benchmarks"]
    times, diffs = {}, {}
    for b in bench:
        name = b.get("run_name", b["name"]).replace("BM_per_example_", "").replace("BM_", "").replace("/real_time", "")
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        times.setdefault(name, []).append(b["real_time"])
        diffs = {k: b[k] for k in ("max_abs_diff_vmap_vs_loop", "max_abs_diff_jit_vs_loop",
                                   "max_abs_diff_clipped_jit_vs_eager") if k in b}
    return {k: statistics.median(v) for k, v in times.items()}, diffs


if args.jx:
    jx_ms, jx_diffs = jx_medians(args.jx)
    tv, tl = res["functorch_vmap_grad_ms"], res["loop_autograd_ms"]
    v, loop = jx_ms["vmap_grad"], jx_ms["loop_grad"]
    print()
    print(f"| per-example grads, MLP 784-256-256-10, batch 128 | jx | PyTorch ({api}) | jx vs PyTorch |")
    print("|---|---|---|---|")
    print(f"| vmap(grad(loss)), eager | {v:.2f} ms | {tv:.2f} ms | {tv / v:.2f}x |")
    if "jit_vmap_grad" in jx_ms:
        j = jx_ms["jit_vmap_grad"]
        print(f"| jit(vmap(grad(loss))) | {j:.2f} ms | - | {tv / j:.2f}x (vs functorch vmap) |")
    print(f"| loop of 128 grad calls + stack | {loop:.2f} ms | {tl:.2f} ms | {tl / loop:.2f}x |")
    print(f"| loop / vmap (speedup of vmap) | {loop / v:.1f}x | {tl / tv:.1f}x | |")
    tc = res["functorch_clipped_mean_ms"]
    names = {"clipped_mean_jit": "clipped mean (DP-SGD), jit (per_example pass)",
             "clipped_mean_jit_materialized": "clipped mean, jit without the pass (materialized)",
             "clipped_mean_eager": "clipped mean, eager"}
    for key, label in names.items():
        if key in jx_ms:
            c = jx_ms[key]
            print(f"| {label} | {c:.2f} ms | {tc:.2f} ms | {tc / c:.2f}x |")
    if "clipped_mean_jit" in jx_ms and "clipped_mean_jit_materialized" in jx_ms:
        print(f"| pass speedup (materialized / pass) | "
              f"{jx_ms['clipped_mean_jit_materialized'] / jx_ms['clipped_mean_jit']:.1f}x | | |")
    print()
    print("max |vmap - loop|: jx " + ", ".join(f"{k.replace('max_abs_diff_', '')} {x:.2g}" for k, x in jx_diffs.items())
          + f"; PyTorch {diff:.2g}")
