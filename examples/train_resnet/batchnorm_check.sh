#!/usr/bin/env bash
# train_resnet's BatchNorm, checked through the program on a slice of Fashion-MNIST:
#  1. training moves the running averages of the first BatchNorm away from their initial
#     values (mean 0, var 1): the train step carries the updated batch_stats forward;
#  2. evaluation normalizes with the running averages, so a prediction does not depend on
#     the rest of its batch: the trained checkpoint (--eval-only) gets the same number of the
#     first 256 test images right with test batches of 256, 1 and 96 (96 + 96 + 64 images).
#     With batch statistics, a batch of one would normalize every feature to 0 (chance);
#  3. the checkpoint holds the trained running averages (printed again by --eval-only).
# Usage: batchnorm_check.sh TRAIN_RESNET WORK_DIR
set -euo pipefail
exe=$1
work=$2
data=/usr/share/datasets/fashion-mnist
[ -d "$data" ] || { echo "SKIP: no Fashion-MNIST in $data (scripts/install-deps installs it)"; exit 77; }
rm -rf "$work"
mkdir -p "$work"
n=1280
"$exe" --limit $n --batch-size 64 --seed 1 --epochs 1 --out "$work/run" > "$work/train.log"
stats=$(grep "^BatchNorm_0 running averages" "$work/train.log") || { echo "FAIL: no running averages printed"; cat "$work/train.log"; exit 1; }
# "... mean |mean| M (initially 0), mean var V (initially 1)"
read -r abs_mean var < <(sed -E 's/.*mean \|mean\| ([0-9.]+) .*mean var ([0-9.]+) .*/\1 \2/' <<< "$stats")
awk -v m="$abs_mean" -v v="$var" 'BEGIN { exit !(m > 1e-3 && (v - 1 > 1e-3 || 1 - v > 1e-3)) }' ||
  { echo "FAIL: the running averages did not move from mean 0, var 1: $stats"; exit 1; }
n_eval=256
count=()
for b in $n_eval 1 96; do
  "$exe" --limit $n_eval --out "$work/run" --eval-only --eval-batch-size $b > "$work/eval$b.log"
  line=$(grep "test accuracy" "$work/eval$b.log") || { echo "FAIL: --eval-only printed no accuracy"; cat "$work/eval$b.log"; exit 1; }
  # "... test accuracy A (C of T images, batches of B)"
  read -r correct total < <(sed -E 's/.*\(([0-9]+) of ([0-9]+) images.*/\1 \2/' <<< "$line")
  [ "$total" = $n_eval ] || { echo "FAIL: evaluated $total images, not $n_eval: $line"; exit 1; }
  count+=("$correct")
  grep -qF "$stats" "$work/eval$b.log" ||
    { echo "FAIL: the checkpoint's running averages differ: $(grep BatchNorm_0 "$work/eval$b.log") vs $stats"; exit 1; }
done
# Chance is 10%: the comparison means something only if the model learned.
[ "${count[0]}" -gt $((n_eval * 4 / 10)) ] || { echo "FAIL: ${count[0]} of $n_eval right after training: the model did not learn"; exit 1; }
[ "${count[1]}" = "${count[0]}" ] && [ "${count[2]}" = "${count[0]}" ] ||
  { echo "FAIL: right answers with test batches of $n_eval, 1, 96: ${count[*]}: evaluation depends on the batch"; exit 1; }
echo "$stats; ${count[0]} of $n_eval test images right with test batches of $n_eval, 1 and 96"
rm -rf "$work"
