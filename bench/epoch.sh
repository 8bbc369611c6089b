#!/usr/bin/env bash
# The main job against PyTorch's: examples/train_cnn (2 epochs, batch 128) and
# ../shared/peers/fmnist_train.py (the same CNN, optimizer, clipping, batch and epochs in
# PyTorch, at its best configuration here), run in turn ROUNDS times (default 2). Each program
# times its own training epochs (jx: the epoch line's seconds, which include the first step's
# compile in epoch 1; PyTorch: epoch_time), and prints its test accuracy after each epoch.
# Usage: bench/epoch.sh [build-dir] [rounds]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${2:-2}
data=/usr/share/datasets/fashion-mnist
out=$(mktemp -d)
export OMP_NUM_THREADS=2
export GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967295
cmake --build "$build" --target train_cnn > /dev/null
for r in $(seq "$rounds"); do
  "$build/examples/train_cnn" --epochs 2 --data "$data" --out "$out/jx_$r" > "$out/jx_$r.log"
  # Its own flags beyond --threads clash with torch_bench.py's, which it imports: it reads
  # its data from Debian's Fashion-MNIST directory and trains 2 epochs by default.
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 ../shared/peers/fmnist_train.py --threads 2 \
    > "$out/torch_$r.log"
done
/usr/bin/python3 - "$out" "$rounds" <<'PY'
import re, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
jx, pt = {1: [], 2: []}, {1: [], 2: []}
for r in range(1, rounds + 1):
    for m in re.finditer(r"epoch (\d)/2 .* test acc ([\d.]+)%\s+([\d.]+) s", open(f"{out}/jx_{r}.log").read()):
        jx[int(m[1])].append((float(m[3]), float(m[2])))
    for m in re.finditer(r"epoch (\d): .*test_acc ([\d.]+)\s+epoch_time ([\d.]+)s", open(f"{out}/torch_{r}.log").read()):
        pt[int(m[1])].append((float(m[3]), 100 * float(m[2])))
print("| epoch | jx train_cnn s (test acc) | PyTorch fmnist_train.py s (test acc) | jx vs PyTorch |")
print("|---|---|---|---|")
for e in (1, 2):
    j = statistics.median(t for t, _ in jx[e]); p = statistics.median(t for t, _ in pt[e])
    ja = " ".join(f"{a:.2f}%" for _, a in jx[e]); pa = " ".join(f"{a:.2f}%" for _, a in pt[e])
    print(f"| {e} | {j:.1f} ({ja}) | {p:.1f} ({pa}) | {p / j:.2f}x |")
print(f"\nmedians of {rounds} rounds, run in turn; logs in {out}")
PY
