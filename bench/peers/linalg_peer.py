#!/usr/bin/python3
"""NumPy's and PyTorch's side of bench/bench_linalg.cpp: Cholesky of a symmetric positive
definite a a^T + n I, the thin SVD (full_matrices=False) and the singular values alone, of
square float32/float64 matrices, n = 256 and 1024. Both libraries call the system's
liblapack.so.3 (OpenBLAS here, the same library jx calls): numpy.linalg.cholesky / svd /
svd(compute_uv=False), torch.linalg.cholesky / svd / svdvals. Each case: warm-up calls,
then the median over --runs runs of the time per call (a run repeats the call until it
takes ~0.2 s). One line per case: "<library> <op> <dtype> <n> <ms>". Run through
bench/linalg.sh, with /usr/bin/python3 (Debian's, which has numpy and torch)."""
import argparse
import ctypes
import json
import os
import time

ap = argparse.ArgumentParser()
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--sizes", default="256,1024")
ap.add_argument("--runs", type=int, default=5)
ap.add_argument("--only", default="numpy,torch")
ap.add_argument("--json", default="")
args = ap.parse_args()
os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
import numpy as np  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(args.threads)


def openblas_info():
    """The OpenBLAS that numpy and torch loaded (through liblapack.so.3), if it is one."""
    try:
        lib = ctypes.CDLL("libopenblas.so.0")
    except OSError:
        return "not OpenBLAS (no libopenblas.so.0)"
    lib.openblas_get_config.restype = ctypes.c_char_p
    lib.openblas_get_corename.restype = ctypes.c_char_p
    return (f"{lib.openblas_get_config().decode()}, core {lib.openblas_get_corename().decode()}, "
            f"{lib.openblas_get_num_threads()} threads")


def timeit(fn):
    for _ in range(2):
        fn()
    t0 = time.perf_counter()
    fn()
    one = time.perf_counter() - t0
    reps = max(1, int(0.2 / max(one, 1e-9)))
    runs = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        runs.append((time.perf_counter() - t0) / reps)
    runs.sort()
    return runs[len(runs) // 2]


print(f"# numpy {np.__version__}, torch {torch.__version__}")
print(f"# lapack: {openblas_info()}")
print(f"# torch.get_num_threads() = {torch.get_num_threads()}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}")
only = set(args.only.split(","))
res = {}
for n in [int(s) for s in args.sizes.split(",")]:
    for dt in ("float32", "float64"):
        rng = np.random.default_rng(0)
        g = rng.standard_normal((n, n)).astype(dt)
        spd = (g.astype(np.float64) @ g.T.astype(np.float64) + n * np.eye(n)).astype(dt)
        cases = []
        if "numpy" in only:
            cases += [("numpy", "cholesky", lambda: np.linalg.cholesky(spd)),
                      ("numpy", "svd", lambda: np.linalg.svd(g, full_matrices=False)),
                      ("numpy", "svdvals", lambda: np.linalg.svd(g, compute_uv=False))]
        if "torch" in only:
            tg, tspd = torch.from_numpy(g), torch.from_numpy(spd)
            cases += [("torch", "cholesky", lambda: torch.linalg.cholesky(tspd)),
                      ("torch", "svd", lambda: torch.linalg.svd(tg, full_matrices=False)),
                      ("torch", "svdvals", lambda: torch.linalg.svdvals(tg))]
        for lib, op, fn in cases:
            ms = timeit(fn) * 1e3
            res[f"{lib} {op} {dt} {n}"] = ms
            print(f"{lib} {op} {dt} {n} {ms:.3f}", flush=True)
if args.json:
    with open(args.json, "w") as f:
        json.dump(res, f, indent=1)
