#!/usr/bin/python3
"""NumPy's and PyTorch's side of bench/bench_fft.cpp, on the same six cases and the same
inputs' shapes and dtypes: complex64 FFT of 2^20 points, complex128 FFT 2^20, complex64
IFFT 2^20, float32 RFFT 2^20, 1024 signals of 1024 complex64 points (FFT along the last
axis), and a 1024 x 1024 complex64 2-D FFT. numpy.fft.fft / ifft / rfft / fft2 and
torch.fft.fft / ifft / rfft / fft2.

What each library runs here (the script prints the versions):
- NumPy 1.24's numpy.fft is its C pocketfft, single-threaded whatever OMP_NUM_THREADS says,
  and it computes in double precision: complex64 and float32 inputs are converted to
  complex128 / float64 and the result is complex128 (the conversion is part of its time).
- Debian's PyTorch 1.13 has no MKL: torch.fft runs the C++ pocketfft built into ATen, in
  the input's precision (complex64 stays complex64). torch.set_num_threads(--threads) is
  set, but this path runs one transform on one thread: it measured the same at 1 and 2
  threads (2026-12-02: 13.3 against 13.9 ms for the complex64 2^20 FFT).

Each case: warm-up calls, then the median over --runs runs of the time per call (a run
repeats the call until it takes ~0.2 s). One line per case: "<library> <case> <ms>", the
case names those of bench_fft.cpp. Run through bench/fft.sh, with /usr/bin/python3
(Debian's, which has numpy and torch)."""
import argparse
import json
import os
import time

ap = argparse.ArgumentParser()
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--runs", type=int, default=5)
ap.add_argument("--only", default="numpy,torch")
ap.add_argument("--json", default="")
args = ap.parse_args()
os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
import numpy as np  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(args.threads)


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


def signal(shape, dtype, real=False):
    rng = np.random.default_rng(0)
    re = rng.standard_normal(shape)
    if real:
        return re.astype(dtype)
    return (re + 1j * rng.standard_normal(shape)).astype(dtype)


N = 1 << 20
# name, input, numpy's call, torch's call (the same transform)
CASES = [
    ("c64_fft_2^20", signal(N, np.complex64), np.fft.fft, torch.fft.fft),
    ("c128_fft_2^20", signal(N, np.complex128), np.fft.fft, torch.fft.fft),
    ("c64_ifft_2^20", signal(N, np.complex64), np.fft.ifft, torch.fft.ifft),
    ("f32_rfft_2^20", signal(N, np.float32, real=True), np.fft.rfft, torch.fft.rfft),
    ("c64_fft_1024x1024_batched", signal((1024, 1024), np.complex64), np.fft.fft, torch.fft.fft),
    ("c64_fft2_1024x1024", signal((1024, 1024), np.complex64), np.fft.fft2, torch.fft.fft2),
]

print(f"# numpy {np.__version__} (pocketfft, 1 thread, double precision), torch {torch.__version__}")
print(f"# torch.get_num_threads() = {torch.get_num_threads()}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, "
      f"torch MKL: {torch.backends.mkl.is_available()}")
only = set(args.only.split(","))
res = {}
for name, x, np_fn, torch_fn in CASES:
    cases = []
    if "numpy" in only:
        cases.append(("numpy", lambda: np_fn(x)))
    if "torch" in only:
        tx = torch.from_numpy(x)
        cases.append(("torch", lambda: torch_fn(tx)))
    for lib, fn in cases:
        ms = timeit(fn) * 1e3
        res[f"{lib} {name}"] = ms
        print(f"{lib} {name} {ms:.3f}", flush=True)
# What the output dtypes are (numpy upcasts single precision).
print(f"# numpy.fft.fft(complex64) -> {np.fft.fft(CASES[0][1][:8]).dtype}, "
      f"torch.fft.fft(complex64) -> {torch.fft.fft(torch.from_numpy(CASES[0][1][:8])).dtype}")
if args.json:
    with open(args.json, "w") as f:
        json.dump(res, f, indent=1)
