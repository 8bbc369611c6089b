#!/usr/bin/env bash
# Runs jx's benchmarks and the PyTorch peers in one go and prints the table of
# bench/README.md. Usage: bench/run.sh [build-dir]   (needs python3-torch for the peer rows)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps --bench
build=${1:-build-bench}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DJX_BUILD_TESTS=OFF > /dev/null
cmake --build "$build" --target bench_eager bench_matmul bench_random bench_grad bench_vmap bench_jit \
  bench_jit_eltwise bench_train > /dev/null
out=$(mktemp -d)
export OMP_NUM_THREADS=2
"$build/bench/bench_eager" --benchmark_format=json --benchmark_min_time=0.5 > "$out/eager.json"
"$build/bench/bench_matmul" --benchmark_format=json --benchmark_min_time=0.5 > "$out/matmul.json"
"$build/bench/bench_random" --benchmark_format=json --benchmark_min_time=0.5 > "$out/random.json"
"$build/bench/bench_grad" --benchmark_format=json --benchmark_min_time=0.5 > "$out/grad.json"
"$build/bench/bench_vmap" --benchmark_format=json --benchmark_repetitions=7 --benchmark_min_time=0.5 > "$out/vmap.json"
"$build/bench/bench_jit" --benchmark_format=json --benchmark_min_time=0.5 > "$out/jit.json"
"$build/bench/bench_jit_eltwise" --benchmark_format=json > "$out/jit_eltwise.json"
"$build/bench/bench_train" --benchmark_format=json > "$out/train.json"
if /usr/bin/python3 -c "import torch" 2>/dev/null; then
  # PyTorch at its best here (../shared/peers/README.md): OpenBLAS coretype unset, malloc tuned.
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE \
    GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967295 \
    /usr/bin/python3 bench/peers/torch_foundation.py --threads 2 --json "$out/torch.json" > /dev/null
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE \
    GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967295 \
    /usr/bin/python3 bench/peers/torch_vmap.py --threads 2 --json "$out/torch_vmap.json" --jx "$out/vmap.json"
  # The MLP training step (Adam, dropout 0.1, batch 128) and the elementwise chain of the
  # shared peers, when this checkout sits beside them.
  if [ -f ../shared/peers/torch_bench.py ]; then
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE \
      GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967295 \
      /usr/bin/python3 ../shared/peers/torch_bench.py --threads 2 --only mlp,eltwise
  fi
fi
echo "jit / train-step / eltwise raw results: $out/{jit,train,jit_eltwise}.json"
/usr/bin/python3 bench/report.py "$out"
