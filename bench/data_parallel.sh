#!/usr/bin/env bash
# Data-parallel CNN training over 2 MPI processes (1 thread each) against 1 process (2
# threads), same global batch, in turns (issue 18's goal: at least 0.85 of one process'
# throughput), and the gradient all-reduce against MPI_Allreduce of the same bytes.
# Usage: bench/data_parallel.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
build=${1:-build}
rounds=${2:-3}
exe=$build/bench/bench_data_parallel
[ -x "$exe" ] || { echo "build $exe first (cmake --build $build --target bench_data_parallel)"; exit 1; }
mpi=(mpirun -np 2 --bind-to core --allow-run-as-root --mca btl self,vader -x OMP_NUM_THREADS=1)
one=() two=()
for r in $(seq "$rounds"); do
  a=$(OMP_NUM_THREADS=2 "$exe")
  b=$("${mpi[@]}" "$exe")
  echo "$a"
  echo "$b"
  one+=("$(sed -n 's/.* \([0-9.]*\) ms\/step.*/\1/p' <<<"$a")")
  two+=("$(sed -n 's/.* \([0-9.]*\) ms\/step.*/\1/p' <<<"$b" | head -1)")
done
python3 - "${one[*]}" "${two[*]}" <<'PY'
import statistics, sys
one = [float(x) for x in sys.argv[1].split()]
two = [float(x) for x in sys.argv[2].split()]
pairs = [a / b for a, b in zip(one, two)]
print(f"throughput of 2 processes x 1 thread / 1 process x 2 threads: median {statistics.median(pairs):.2f} "
      f"(per round: {', '.join(f'{p:.2f}' for p in pairs)}); step {statistics.median(one):.1f} ms vs "
      f"{statistics.median(two):.1f} ms")
PY
