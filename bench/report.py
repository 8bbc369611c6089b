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
    us = disp["real_time"] / 1e3 if disp.get("time_unit") == "ns" else disp["real_time"]
    t = torch.get("dispatch_add_1elem_us", float("nan"))
    rows.append(("eager dispatch, 1-element add", f"{us:.3f} us", f"{t:.3f} us", f"{t / us:.1f}x faster", "<= 0.3 us"))
copy = gbps(eager.get("BM_copy_16M"))
for op, key in (("add", "BM_add_16M"), ("exp", "BM_exp_16M"), ("sum", "BM_sum_16M")):
    g = gbps(eager.get(key))
    t = torch.get(f"{op}_16M_GBps", float("nan"))
    rows.append((f"{op} over 16M float32", f"{g:.1f} GB/s = {100 * g / copy:.0f}% of copy ({copy:.1f} GB/s)",
                 f"{t:.1f} GB/s", f"{g / t:.2f}x", ">= 70% of copy"))
for k in (256, 512, 1024, 2048):
    j = mm.get(f"BM_jx_matmul/{k}")
    r = mm.get(f"BM_dnnl_sgemm/{k}")
    if j and r:
        gj, gr = j.get("GFLOPS", float("nan")) / 1e9 if j.get("GFLOPS", 0) > 1e6 else j.get("GFLOPS", float("nan")), \
            r.get("GFLOPS", float("nan")) / 1e9 if r.get("GFLOPS", 0) > 1e6 else r.get("GFLOPS", float("nan"))
        t = torch.get(f"matmul_{k}_GFLOPs", float("nan"))
        rows.append((f"matmul {k}x{k} float32", f"{gj:.0f} GFLOP/s = {100 * gj / gr:.0f}% of dnnl_sgemm ({gr:.0f})",
                     f"{t:.0f} GFLOP/s", f"{gj / t:.2f}x", ">= 90% of the library"))
print("| workload | jx | PyTorch | jx vs PyTorch | goal |")
print("|---|---|---|---|---|")
for r in rows:
    print("| " + " | ".join(r) + " |")
for name, b in sorted(rnd.items()):
    print(f"\n{name}: {gbps(b):.2f} GB/s" + (f" (torch.rand: {torch.get('rand_64M_GBps', float('nan')):.2f} GB/s)" if "uniform" in name or "bits" in name else ""))
