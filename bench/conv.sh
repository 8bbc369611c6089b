#!/usr/bin/env bash
# Convolution and pooling against PyTorch and the FMA peak, in one run: the tutorial CNN's
# two conv layers (batch 128, 3x3 SAME, NHWC) forward and forward + both backward passes,
# conv + bias + relu eager and jitted, max pool 2x2 forward and forward + backward.
# Usage: bench/conv.sh [build-dir]   (needs python3-torch for the PyTorch rows)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps --bench
build=${1:-build-bench}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DJX_BUILD_TESTS=OFF > /dev/null
cmake --build "$build" --target bench_conv bench_windowed > /dev/null
out=$(mktemp -d)
export OMP_NUM_THREADS=2
# PyTorch at its best here (../shared/peers/README.md); the same malloc tuning for jx.
export GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967295
if [ -f ../shared/peers/peak_fma.cpp ]; then
  g++ -O2 -march=native -fopenmp ../shared/peers/peak_fma.cpp -o "$out/peak_fma"
  "$out/peak_fma" | tee "$out/peak.txt"
fi
"$build/bench/bench_conv" --benchmark_format=json --benchmark_min_time=1 --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true > "$out/conv.json"
"$build/bench/bench_windowed" --benchmark_format=json --benchmark_repetitions=5 \
  --benchmark_report_aggregates_only=true > "$out/windowed.json"
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 bench/peers/torch_conv.py --threads 2 --json "$out/torch_conv.json" > /dev/null
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 bench/peers/torch_windowed.py --threads 2 --json "$out/torch_windowed.json" > /dev/null
/usr/bin/python3 - "$out" <<'PY'
import json, re, sys, os
out = sys.argv[1]
def medians(path):
    r = {}
    for b in json.load(open(path))["benchmarks"]:
        if b.get("aggregate_name") == "median":
            r[b["run_name"]] = b["real_time"] * {"ms": 1, "us": 1e-3, "ns": 1e-6}[b["time_unit"]]
    return r
jx = medians(f"{out}/conv.json")
jx.update(medians(f"{out}/windowed.json"))
for k in list(jx):  # "BM_x/real_time" also as "BM_x"
    jx.setdefault(k.replace("/real_time", ""), jx[k])
tc = json.load(open(f"{out}/torch_conv.json"))
tw = json.load(open(f"{out}/torch_windowed.json"))
peak = None
if os.path.exists(f"{out}/peak.txt"):
    m = re.search(r"threads=2\s+zmm FMA:\s*([\d.]+)", open(f"{out}/peak.txt").read())
    peak = float(m.group(1)) if m else None
flops = {1: 2 * 128 * 28 * 28 * 1 * 32 * 9, 2: 2 * 128 * 14 * 14 * 32 * 64 * 9}
print("| workload | jx ms | PyTorch ms | jx vs PyTorch |")
print("|---|---|---|---|")
tot_jx = tot_t = 0
for l in (1, 2):
    for what, key, tkey in (("forward", f"BM_conv_fwd/{l-1}/real_time", f"layer{l}_fwd_ms"),
                            ("forward + both backward", f"BM_conv_fwd_bwd/{l-1}/real_time", f"layer{l}_fwd_bwd_ms"),
                            ("forward + both backward, jit", f"BM_conv_fwd_bwd_jit/{l-1}/real_time", f"layer{l}_fwd_bwd_ms")):
        j, t = jx[key], tc[tkey]
        print(f"| conv layer {l} {what} | {j:.2f} | {t:.2f} | {t / j:.2f}x |")
        if what == "forward + both backward":
            tot_jx += j; tot_t += t
print(f"| both conv layers, forward + both backward | {tot_jx:.2f} | {tot_t:.2f} | {tot_t / tot_jx:.2f}x |")
for l in (1, 2):
    e, c = jx[f"BM_conv_bias_relu/layer:{l-1}/jit:0/real_time"], jx[f"BM_conv_bias_relu/layer:{l-1}/jit:1/real_time"]
    print(f"| conv layer {l} + bias + relu: eager / jit | {e:.2f} / {c:.2f} | | jit {e / c:.2f}x eager |")
print(f"| max pool 2x2 forward | {jx['BM_maxpool_fwd_jx']:.2f} | {tw['maxpool_fwd_ms']:.2f} | {tw['maxpool_fwd_ms'] / jx['BM_maxpool_fwd_jx']:.2f}x |")
print(f"| max pool 2x2 forward + backward | {jx['BM_maxpool_fwd_bwd_jx']:.2f} | {tw['maxpool_fwd_bwd_ms']:.2f} | {tw['maxpool_fwd_bwd_ms'] / jx['BM_maxpool_fwd_bwd_jx']:.2f}x |")
if peak:
    g = flops[2] / jx["BM_conv_fwd/1/real_time"] / 1e6
    print(f"\nconv layer 2 forward: {g:.0f} GFLOP/s = {100 * g / peak:.0f}% of the measured 2-thread FMA peak ({peak:.0f} GFLOP/s)")
PY
