#!/usr/bin/env bash
# Checkpoint save and restore of a 105 MB tree against this disk's write/read bandwidth and
# PyTorch's torch.save / torch.load of the same tensors, in one run, in one directory.
# Usage: bench/checkpoint.sh [build-dir] [dir]   (needs python3-torch for the PyTorch rows)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps --bench
build=${1:-build-bench}
dir=${2:-$build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DJX_BUILD_TESTS=OFF > /dev/null
cmake --build "$build" --target bench_checkpoint > /dev/null
export OMP_NUM_THREADS=2
"$build/bench/bench_checkpoint" "$dir"
/usr/bin/python3 bench/peers/torch_checkpoint.py "$dir"
