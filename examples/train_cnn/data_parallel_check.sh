#!/usr/bin/env bash
# train_cnn --data-parallel against one device (issue 18): 20 steps of batch 64 on a slice of
# Fashion-MNIST, without dropout (each device draws its own dropout mask, so masks could
# not match one device's), once on one device and once pmapped over 2 CPU devices. The
# training loss must agree to 1e-5 relative and the test accuracy exactly: the pmapped
# step averages the two halves' gradients (reduce-scattered), which is the full batch's gradient up
# to float rounding.
# Usage: data_parallel_check.sh PROGRAM WORK_DIR
set -euo pipefail
exe=$1
work=$2
data=/usr/share/datasets/fashion-mnist
[ -d "$data" ] || { echo "SKIP: no Fashion-MNIST in $data (scripts/install-deps installs it)"; exit 77; }
rm -rf "$work"
mkdir -p "$work"
args=(--limit 1280 --batch-size 64 --epochs 1 --dropout 0 --seed 3)
"$exe" "${args[@]}" --out "$work/one" > "$work/one.log"
JX_NUM_CPU_DEVICES=2 "$exe" "${args[@]}" --out "$work/two" --data-parallel > "$work/two.log"
grep -q "data-parallel over 2 devices" "$work/two.log" || { echo "FAIL: not data-parallel"; cat "$work/two.log"; exit 1; }
one=$(sed -n 2p "$work/one/metrics.csv")
two=$(sed -n 2p "$work/two/metrics.csv")
awk -v a="$one" -v b="$two" 'BEGIN {
  split(a, x, ","); split(b, y, ",");
  rel = (x[2] - y[2]) / x[2]; if (rel < 0) rel = -rel;
  if (rel > 1e-5) { printf "FAIL: training loss %s on one device, %s on two (%.2g relative)\n", x[2], y[2], rel; exit 1 }
  if (x[4] != y[4]) { printf "FAIL: test accuracy %s on one device, %s on two\n", x[4], y[4]; exit 1 }
  printf "data-parallel matches: loss %s / %s, test accuracy %s\n", x[2], y[2], y[4] }'
rm -rf "$work"
