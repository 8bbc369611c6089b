#!/usr/bin/python3
"""PyTorch's side of bench/bench_checkpoint.cpp: torch.save / torch.load of the same 105 MB of
float32 tensors (a state dict of 10 layers: weight [2560, 1024], bias [2560]) in the same
directory, the median of 5 runs. torch.save does not fsync; the rows show it without and with
an os.fsync of the file (jx's save always syncs). torch.load runs with the file's pages
dropped from the page cache (posix_fadvise DONTNEED) and warm.
Run: /usr/bin/python3 bench/peers/torch_checkpoint.py DIR"""
import os
import shutil
import statistics
import sys
import time

import torch

torch.set_num_threads(2)
base = sys.argv[1] if len(sys.argv) > 1 else "."
d = os.path.join(base, "torch_bench_checkpoint")
shutil.rmtree(d, ignore_errors=True)
os.makedirs(d)
g = torch.Generator().manual_seed(0)
sd = {}
for i in range(10):
    sd["fc%d.weight" % i] = torch.randn(2560, 1024, generator=g)
    sd["fc%d.bias" % i] = torch.zeros(2560)
mb = sum(t.numel() * t.element_size() for t in sd.values()) / 1e6
path = os.path.join(d, "model.pt")


def drop(p):
    fd = os.open(p, os.O_RDONLY)
    os.fdatasync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)


rows = {"torch.save (no fsync)": [], "torch.save + fsync": [], "torch.load, page cache dropped": [],
        "torch.load, page cache warm": []}
for _ in range(5):
    t0 = time.perf_counter()
    torch.save(sd, path)
    rows["torch.save (no fsync)"].append(time.perf_counter() - t0)
    os.remove(path)
    t0 = time.perf_counter()
    torch.save(sd, path)
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    rows["torch.save + fsync"].append(time.perf_counter() - t0)
    drop(path)
    t0 = time.perf_counter()
    torch.load(path)
    rows["torch.load, page cache dropped"].append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    torch.load(path)
    rows["torch.load, page cache warm"].append(time.perf_counter() - t0)
    os.remove(path)
shutil.rmtree(d)
print("state dict: %d tensors, %.1f MB float32; median of 5" % (len(sd), mb))
for k, v in rows.items():
    s = statistics.median(v)
    print("%-44s %8.1f ms %8.0f MB/s" % (k, s * 1e3, mb / s))
