#!/usr/bin/env bash
# train_cnn's --resume, checked end to end on a small slice of Fashion-MNIST: two epochs in
# one run against one epoch, then a second run with --resume. The metrics of every epoch
# (losses and accuracies, not the times) and the final parameters must be the same.
# Usage: resume_check.sh TRAIN_CNN WORK_DIR
set -euo pipefail
exe=$1
work=$2
data=/usr/share/datasets/fashion-mnist
[ -d "$data" ] || { echo "SKIP: no Fashion-MNIST in $data (scripts/install-deps installs it)"; exit 77; }
rm -rf "$work"
mkdir -p "$work"
args=(--limit 640 --batch-size 64 --seed 3)
"$exe" "${args[@]}" --epochs 2 --out "$work/straight" > "$work/straight.log"
"$exe" "${args[@]}" --epochs 1 --out "$work/resumed" > "$work/first.log"
"$exe" "${args[@]}" --epochs 2 --out "$work/resumed" --resume > "$work/second.log"
grep -q "resumed from .*/checkpoints/1" "$work/second.log" || { echo "FAIL: the second run did not resume"; cat "$work/second.log"; exit 1; }
cut -d, -f1-4 "$work/straight/metrics.csv" > "$work/a.csv"
cut -d, -f1-4 "$work/resumed/metrics.csv" > "$work/b.csv"
if ! cmp -s "$work/a.csv" "$work/b.csv"; then
  echo "FAIL: the resumed run's metrics differ"; diff "$work/a.csv" "$work/b.csv"; exit 1
fi
cmp -s "$work/straight/checkpoints/2/state/arrays.safetensors" "$work/resumed/checkpoints/2/state/arrays.safetensors" ||
  { echo "FAIL: the final parameters differ"; exit 1; }
for f in metrics.csv metrics.json curves.svg; do
  [ -s "$work/resumed/$f" ] || { echo "FAIL: no $f"; exit 1; }
done
echo "resume matches: $(tail -n 1 "$work/a.csv")"
rm -rf "$work"
