#!/usr/bin/env bash
# train_cnn --data-parallel over 2 MPI processes (issue 18): 20 steps of global batch 64 on
# a slice of Fashion-MNIST, without dropout (each device draws its own mask), three ways:
#   one   1 process, 1 device
#   dev2  1 process, 2 devices (pmap's replica threads)
#   two   2 processes under mpirun, 1 device each (the gradients reduce-scattered through MPI, the update sharded)
# Process p reads examples p, p + 2, ... (the pipeline's shard) and device d of one process
# takes examples d, d + 2, ..., so `two` and `dev2` compute the same sums in the same order:
# their final states (parameters and AdamW's moments) must be equal bit for bit. Against
# `one`, which sums the whole batch at once, the rounding differs: the training loss must
# agree to 1e-5 relative, the test accuracy exactly, and the parameters to 1e-4 relative in
# norm (AdamW divides by the root of the second moment, which amplifies the rounding of tiny
# gradients: measured 7e-7 with the sharded update). Then a single process evaluates the 2-process checkpoint,
# written once by process 0 (--eval-only).
# Usage: mpi_check.sh PROGRAM WORK_DIR MPIRUN [MPIRUN FLAGS...]
set -euo pipefail
exe=$1
work=$2
shift 2
data=/usr/share/datasets/fashion-mnist
[ -d "$data" ] || { echo "SKIP: no Fashion-MNIST in $data (scripts/install-deps installs it)"; exit 77; }
rm -rf "$work"
mkdir -p "$work"
args=(--limit 1280 --batch-size 64 --epochs 1 --dropout 0 --seed 3)
"$exe" "${args[@]}" --out "$work/one" > "$work/one.log"
OMP_NUM_THREADS=2 JX_NUM_CPU_DEVICES=2 "$exe" "${args[@]}" --out "$work/dev2" --data-parallel > "$work/dev2.log"
timeout 600 "$@" -x OMP_NUM_THREADS=1 "$exe" "${args[@]}" --out "$work/two" --data-parallel > "$work/two.log" 2>&1 ||
  { echo "FAIL: the 2-process run failed"; cat "$work/two.log"; exit 1; }
grep -q "data-parallel over 2 devices in 2 processes" "$work/two.log" ||
  { echo "FAIL: not 2 processes"; cat "$work/two.log"; exit 1; }
[ "$(grep -c "steps of 64 per epoch" "$work/two.log")" = 1 ] || { echo "FAIL: process 1 printed too"; cat "$work/two.log"; exit 1; }
reader=$(dirname "$0")/../../tests/golden/read_checkpoint_numpy.py
for run in one dev2 two; do
  /usr/bin/python3 "$reader" "$work/$run/checkpoints/1/state" "$work/${run}_npy" > /dev/null
done
/usr/bin/python3 - "$work" <<'PY'
import sys, numpy as np
w = sys.argv[1]
names = [l.split()[:2] for l in open(f"{w}/one_npy/manifest.txt")]
load = lambda run, k: np.load(f"{w}/{run}_npy/{k}.npy")
for k, name in names:
    if not np.array_equal(load("two", k), load("dev2", k)):
        sys.exit(f"FAIL: {name} differs between 2 processes and 2 devices in one process (want bit for bit)")
params = [k for k, name in names if name.startswith("params/")]
diff = sum(float(np.sum((load("one", k) - load("two", k)) ** 2)) for k in params) ** 0.5
norm = sum(float(np.sum(load("one", k) ** 2)) for k in params) ** 0.5
if not diff <= 1e-4 * norm:
    sys.exit(f"FAIL: the parameters of 1 and 2 processes differ by {diff / norm:.2g} relative (want <= 1e-4)")
print(f"{len(names)} state leaves equal bit for bit to 2 devices; parameters within {diff / norm:.2g} of 1 process")
PY
row() { sed -n 2p "$1/metrics.csv"; }
awk -v a="$(row "$work/one")" -v b="$(row "$work/two")" 'BEGIN {
  split(a, x, ","); split(b, y, ",");
  rel = (x[2] - y[2]) / x[2]; if (rel < 0) rel = -rel;
  if (rel > 1e-5) { printf "FAIL: training loss %s in 1 process, %s in 2 (%.2g relative)\n", x[2], y[2], rel; exit 1 }
  if (x[4] != y[4]) { printf "FAIL: test accuracy %s in 1 process, %s in 2\n", x[4], y[4]; exit 1 }
  printf "loss %s / %s, test accuracy %s\n", x[2], y[2], y[4] }'
# The checkpoint of 2 processes, restored by 1.
acc=$(row "$work/two" | cut -d, -f4)
"$exe" "${args[@]}" --out "$work/two" --eval-only > "$work/eval.log"
grep -q "test accuracy $acc" "$work/eval.log" ||
  { echo "FAIL: one process restoring the 2-process checkpoint: $(cat "$work/eval.log"), want $acc"; exit 1; }
echo "2 processes match: restored by 1 process, test accuracy $acc"
rm -rf "$work"
