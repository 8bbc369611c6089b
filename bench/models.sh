#!/usr/bin/env bash
# The tutorial's models as whole steps against PyTorch, in one run: the CNN train step (batch
# 32, 128), the ResNet train step with BatchNorm (batch 32, 128), CNN inference (batch 1000),
# and the CNN step's compile time (cold, from the disk cache). PyTorch's side is
# ../shared/peers/torch_bench.py --only cnn,resnet,infer at its best configuration.
# Usage: bench/models.sh [build-dir]   (needs python3-torch for the PyTorch rows)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps --bench
build=${1:-build-bench}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DJX_BUILD_TESTS=OFF > /dev/null
cmake --build "$build" --target bench_models > /dev/null
out=$(mktemp -d)
export OMP_NUM_THREADS=2
# PyTorch at its best here (../shared/peers/README.md); the same malloc tuning for jx.
export GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967295
if [ -f ../shared/peers/peak_fma.cpp ]; then
  g++ -O2 -march=native -fopenmp ../shared/peers/peak_fma.cpp -o "$out/peak_fma"
  "$out/peak_fma" > "$out/peak.txt"
fi
"$build/bench/bench_models" --benchmark_format=json --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true > "$out/models.json"
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 ../shared/peers/torch_bench.py --threads 2 \
  --only cnn,resnet,infer --json "$out/torch.json" > /dev/null
/usr/bin/python3 - "$out" <<'PY'
import json, os, re, sys
out = sys.argv[1]
jx = {}
for b in json.load(open(f"{out}/models.json"))["benchmarks"]:
    if b.get("aggregate_name") == "median":
        ms = b["real_time"] * {"ms": 1, "us": 1e-3, "ns": 1e-6}[b["time_unit"]]
        jx[re.sub(r"/(real_time|manual_time|iterations:\d+)", "", b["run_name"])] = ms
torch = {r["name"]: r["median_ms"] for r in json.load(open(f"{out}/torch.json"))["results"]}
print("| workload | jx jit ms | PyTorch ms | jx vs PyTorch | goal |")
print("|---|---|---|---|---|")
rows = [("CNN train step, batch 32", "BM_cnn_train_step/batch:32", "train_cnn_b32 (AdamW+clip)", ""),
        ("CNN train step, batch 128", "BM_cnn_train_step/batch:128", "train_cnn_b128 (AdamW+clip)", ">= 2x"),
        ("ResNet train step, batch 32", "BM_resnet_train_step/batch:32", "train_resnet_b32 (AdamW+clip)", ""),
        ("ResNet train step, batch 128", "BM_resnet_train_step/batch:128", "train_resnet_b128 (AdamW+clip)", ">= 1.7x"),
        ("CNN inference, batch 1000", "BM_cnn_inference/batch:1000", "infer_cnn_b1000_inference_mode", ">= 2x")]
for what, j, t, goal in rows:
    print(f"| {what} | {jx[j]:.2f} | {torch[t]:.2f} | {torch[t] / jx[j]:.2f}x | {goal} |")
print(f"| CNN train step compile (first call minus the next), cold / from the disk cache | {jx['BM_cnn_step_compile_cold']:.0f} / "
      f"{jx['BM_cnn_step_compile_warm']:.1f} | | | < 2000 / < 50 |")
if os.path.exists(f"{out}/peak.txt"):
    m = re.search(r"threads=2\s+zmm FMA:\s*([\d.]+)", open(f"{out}/peak.txt").read())
    if m:
        peak = float(m.group(1))
        # forward conv1 + conv2 + dense1 + dense2, times 3 for the two backward passes
        # (conv1's input gradient is not needed; counted anyway, as PyTorch's step skips it too).
        b = 128
        fwd = 2 * b * (28 * 28 * 32 * 9 + 14 * 14 * 64 * 32 * 9 + 12544 * 256 + 256 * 10)
        gflop = 3 * fwd / 1e9
        floor = gflop / peak * 1e3
        print(f"\nCNN step, batch 128: {gflop:.2f} GFLOP, {floor:.1f} ms at the measured 2-thread FMA peak "
              f"({peak:.0f} GFLOP/s); jx takes {jx['BM_cnn_train_step/batch:128'] / floor:.1f}x that floor")
PY
