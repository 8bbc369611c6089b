#!/usr/bin/env bash
# A training example's --resume (train_cnn, train_resnet), checked end to end on a small
# slice of Fashion-MNIST: two epochs in one run against one epoch, then a second run with
# --resume. The metrics of every epoch (losses and accuracies, not the times) and the final
# state (parameters, optimizer state, and whatever else the state holds, such as BatchNorm's
# batch_stats) must be the same, byte for byte.
# Usage: resume_check.sh PROGRAM WORK_DIR [KEY [FLAGS...]]   (KEY: a leaf name the final
# state must hold, or ""; FLAGS: more flags for every run, such as --data-parallel)
set -euo pipefail
exe=$1
work=$2
key=${3:-}
shift $(($# < 3 ? $# : 3))
data=/usr/share/datasets/fashion-mnist
[ -d "$data" ] || { echo "SKIP: no Fashion-MNIST in $data (scripts/install-deps installs it)"; exit 77; }
rm -rf "$work"
mkdir -p "$work"
args=(--limit 640 --batch-size 64 --seed 3 "$@")
"$exe" "${args[@]}" --epochs 2 --out "$work/straight" > "$work/straight.log"
"$exe" "${args[@]}" --epochs 1 --out "$work/resumed" > "$work/first.log"
"$exe" "${args[@]}" --epochs 2 --out "$work/resumed" --resume > "$work/second.log"
grep -q "resumed from .*/checkpoints/1" "$work/second.log" || { echo "FAIL: the second run did not resume"; cat "$work/second.log"; exit 1; }
cut -d, -f1-4 "$work/straight/metrics.csv" > "$work/a.csv"
cut -d, -f1-4 "$work/resumed/metrics.csv" > "$work/b.csv"
[ "$(wc -l < "$work/a.csv")" = 3 ] || { echo "FAIL: expected a header and 2 epochs in metrics.csv"; cat "$work/a.csv"; exit 1; }
if ! cmp -s "$work/a.csv" "$work/b.csv"; then
  echo "FAIL: the resumed run's metrics differ"; diff "$work/a.csv" "$work/b.csv"; exit 1
fi
state=checkpoints/2/state/arrays.safetensors
cmp -s "$work/straight/$state" "$work/resumed/$state" || { echo "FAIL: the final state differs"; exit 1; }
if [ -n "$key" ]; then
  grep -q "$key" "$work/straight/$state" || { echo "FAIL: the checkpointed state holds no $key"; exit 1; }
fi
for f in metrics.csv metrics.json curves.svg; do
  [ -s "$work/resumed/$f" ] || { echo "FAIL: no $f"; exit 1; }
done
echo "resume matches: $(tail -n 1 "$work/a.csv")"
rm -rf "$work"
