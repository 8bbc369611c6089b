#!/usr/bin/env bash
# Data-parallel CNN training over 2 MPI processes (1 thread each) against 1 process (2
# threads), same global batch, in turns (issue 18's goal: at least 0.85 of one process'
# throughput), replicated and with the weight update sharded (--shard-update), and the
# gradient all-reduce against MPI_Allreduce of the same bytes.
# Usage: bench/data_parallel.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
build=${1:-build}
rounds=${2:-3}
exe=$build/bench/bench_data_parallel
[ -x "$exe" ] || { echo "build $exe first (cmake --build $build --target bench_data_parallel)"; exit 1; }
mpi=(mpirun -np 2 --bind-to core --allow-run-as-root --mca btl self,vader -x OMP_NUM_THREADS=1)
ms() { sed -n 's/.* \([0-9.]*\) ms\/step.*/\1/p' <<<"$1" | head -1; }
one=() two=() sharded=()
for r in $(seq "$rounds"); do
  a=$(OMP_NUM_THREADS=2 "$exe")
  b=$("${mpi[@]}" "$exe")
  c=$("${mpi[@]}" "$exe" --shard-update=1)
  printf '%s\n%s\n%s\n' "$a" "$b" "$c"
  one+=("$(ms "$a")") two+=("$(ms "$b")") sharded+=("$(ms "$c")")
done
python3 - "${one[*]}" "${two[*]}" "${sharded[*]}" <<'PY'
import statistics, sys
one, two, sharded = ([float(x) for x in a.split()] for a in sys.argv[1:4])
for name, other in (("replicated update", two), ("sharded update", sharded)):
    pairs = [a / b for a, b in zip(one, other)]
    print(f"throughput of 2 processes x 1 thread ({name}) / 1 process x 2 threads: median "
          f"{statistics.median(pairs):.2f} (per round: {', '.join(f'{p:.2f}' for p in pairs)}); step "
          f"{statistics.median(one):.1f} ms vs {statistics.median(other):.1f} ms")
PY
