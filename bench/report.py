#!/usr/bin/python3
"""Turns the JSON of one bench/run.sh run into the markdown table of bench/README.md."""
import json
import os
import sys

d = sys.argv[1]


def load(name):
    p = os.path.join(d, name)
    if not os.path.exists(p):
        return {}
    with open(p) as f:
        j = json.load(f)
    return {b["name"]: b for b in j.get("benchmarks", [])} if "benchmarks" in j else j


eager, mm, rnd, torch = load("eager.json"), load("matmul.json"), load("random.json"), load("torch.json")


def gbps(b):
    return b["bytes_per_second"] / 1e9 if b and "bytes_per_second" in b else float("nan")


rows = []
disp = eager.get("BM_dispatch_add_1elem")
if disp:
    us = disp["cpu_time"] / 1e3  # single-threaded: CPU time is immune to other load
    t = torch.get("dispatch_add_1elem_us", float("nan"))
    rows.append(("eager dispatch, 1-element add", f"{us:.3f} us", f"{t:.3f} us", f"{t / us:.1f}x faster", "<= 0.3 us"))
copy = gbps(eager.get("BM_copy_16M/real_time"))
for op, key in (("add", "BM_add_16M"), ("exp", "BM_exp_16M"), ("sum", "BM_sum_16M")):
    g = gbps(eager.get(key + "/real_time"))
    t = torch.get(f"{op}_16M_GBps", float("nan"))
    rows.append((f"{op} over 16M float32", f"{g:.1f} GB/s = {100 * g / copy:.0f}% of copy ({copy:.1f} GB/s)",
                 f"{t:.1f} GB/s", f"{g / t:.2f}x", ">= 70% of copy"))
for k in (256, 512, 1024, 2048):
    j, r = mm.get(f"BM_jnp_matmul_f32/{k}"), mm.get(f"BM_dnnl_sgemm/{k}")
    if j and r:
        gj, gr = j["GFLOP/s"], r["GFLOP/s"]
        t = torch.get(f"matmul_{k}_GFLOPs", float("nan"))
        rows.append((f"matmul {k}x{k} float32", f"{gj:.0f} GFLOP/s = {100 * gj / gr:.0f}% of dnnl_sgemm ({gr:.0f})",
                     f"{t:.0f} GFLOP/s", f"{gj / t:.2f}x", ">= 90% of the library"))
print("| workload | jx | PyTorch | jx vs PyTorch | goal |")
print("|---|---|---|---|---|")
for r in rows:
    print("| " + " | ".join(r) + " |")
grad = load("grad.json")
fw, vg = grad.get("BM_mlp_forward/real_time"), grad.get("BM_mlp_value_and_grad/real_time")
if fw and vg:
    tf, tv = torch.get("mlp_forward_ms", float("nan")), torch.get("mlp_value_and_grad_ms", float("nan"))
    print()
    print("| MLP 784-256-256-10, batch 128, eager | jx | PyTorch | jx vs PyTorch |")
    print("|---|---|---|---|")
    print(f"| forward (loss) | {fw['real_time']:.2f} ms | {tf:.2f} ms | {tf / fw['real_time']:.2f}x |")
    print(f"| value_and_grad | {vg['real_time']:.2f} ms = {vg['real_time'] / fw['real_time']:.1f}x forward | "
          f"{tv:.2f} ms = {tv / tf:.1f}x forward | {tv / vg['real_time']:.2f}x |")
mem10k = grad.get("BM_grad_memory_10k/iterations:1/real_time")
if mem10k:
    print(f"\nResident memory over 10,000 eager grad calls (small MLP): {mem10k['rss_MB_after_1k']:.1f} MB "
          f"after 1,000, {mem10k['rss_MB_after_10k']:.1f} MB after 10,000.")
mem = gbps(rnd.get("BM_memset_256MB/real_time"))
t = torch.get("rand_64M_GBps", float("nan"))
print()
print("| random, 64M values | jx | torch.rand | jx vs PyTorch |")
print("|---|---|---|---|")
for name, b in sorted(rnd.items()):
    if "memset" in name:
        continue
    g = gbps(b)
    print(f"| {name.replace('BM_', '').replace('/real_time', '')} | {g:.2f} GB/s ({100 * g / mem:.0f}% of memset) | {t:.2f} GB/s | {g / t:.1f}x |")
