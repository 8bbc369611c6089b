#!/usr/bin/env bash
# lax::fft (complex64 FFT of 2^20 points, complex128 FFT 2^20, complex64 IFFT 2^20, float32
# RFFT 2^20, 1024 complex64 signals of 1024 points, a 1024 x 1024 complex64 2-D FFT) against
# the same FFTW plans called directly (issue 20: jx at no less than 80% of the direct call),
# and beside NumPy and PyTorch, in one run: bench_fft (repetitions randomly interleaved,
# medians), bench/peers/fft_peer.py right after, then one table of ratios.
# Usage: bench/fft.sh [--hold-lock] [--no-build] [build-dir]
#   --hold-lock      hold the build lock for the whole run, not only the build, so that
#                    builds of others on a shared machine wait instead of skewing the timings
#   --no-build       run the bench_fft already built in build-dir
# build-dir defaults to build (configured here if it is not yet). Needs python3-numpy and
# python3-torch (scripts/install-deps --bench). About 1m40s, 30-40 s of it FFTW_MEASURE
# planning (the float32 RFFT 2^20 plan alone takes 20-29 s).
set -euo pipefail
cd "$(dirname "$0")/.."
hold=0 nobuild=0 build=build
while [ $# -gt 0 ]; do
  case "$1" in
    --hold-lock) hold=1; shift ;;
    --no-build) nobuild=1; shift ;;
    -*) echo "fft.sh: unknown option '$1'" >&2; exit 2 ;;
    *) build=$1; shift ;;
  esac
done
scripts/install-deps --bench
out=$(mktemp -d)
lock=/tmp/jx-build.lock
[ -f "$build/build.ninja" ] ||
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DJX_BUILD_TESTS=OFF > /dev/null
locked=()
if [ "$hold" = 1 ]; then
  exec 9> "$lock"
  flock 9
else
  locked=(flock "$lock")
fi
if [ "$nobuild" = 0 ] &&
  ! "${locked[@]}" nice cmake --build "$build" --target bench_fft -j2 > "$out/build.log" 2>&1; then
  tail -30 "$out/build.log" >&2
  echo "fft.sh: building bench_fft failed (above)" >&2
  exit 1
fi
export OMP_NUM_THREADS=2  # jx's OpenMP (and so FFTW's threads, fftw3*_omp) and PyTorch's
# The same malloc tuning as the other peer comparisons (../shared/peers/README.md): freed
# blocks stay in the heap, so the direct rows' fresh output buffer costs no page faults,
# as jx's caching pool does not.
export GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967295
unset OMP_WAIT_POLICY
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$build/bench/bench_fft" --benchmark_format=json --benchmark_repetitions=5 --benchmark_min_time=0.2 \
  --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true > "$out/jx.json"
/usr/bin/python3 bench/peers/fft_peer.py --threads 2 --json "$out/peer.json" | grep '^#'
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg); raw results in $out"
/usr/bin/python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
d = json.load(open(f"{out}/jx.json"))
ctx = d["context"]
t = {}
for b in d["benchmarks"]:
    if b.get("aggregate_name") == "median":
        row, case = b["run_name"].split("/")[:2]
        t[(row, case)] = b["real_time"] * {"ms": 1, "us": 1e-3, "ns": 1e-6}[b["time_unit"]]
peer = json.load(open(f"{out}/peer.json"))
print(f"jx: {ctx.get('fftw', '?')}, jx's (and FFTW's) OpenMP threads {ctx.get('omp_max_threads', '?')}; "
      f"FFTW_MEASURE planning, s: {ctx.get('fftw_measure_plan_s', '?')}")
print()
print("jx vs X = X's time / jx's time (1.00 = as fast; issue 20 asks >= 0.80 against the direct call).")
print("direct = FFTW_ESTIMATE, jx's plan, called in the same binary into a fresh output buffer, on memory")
print("allocated as jx's allocator does (2 MiB-aligned, huge-page-advised); 4 KiB pages = the same on fftw_malloc'd memory;")
print("MEASURE = an FFTW_MEASURE plan of the same transform (planned once, outside the timing).")
print()
cases = ["c64_fft_2^20", "c128_fft_2^20", "c64_ifft_2^20", "f32_rfft_2^20",
         "c64_fft_1024x1024_batched", "c64_fft2_1024x1024"]
print("| case | jx ms | jit ms | direct ms | jx vs direct | jit vs direct | direct, output once ms "
      "| direct, 4 KiB pages ms | MEASURE ms | jx vs MEASURE | NumPy ms | jx vs NumPy | PyTorch ms | jx vs PyTorch |")
print("|---" * 14 + "|")
def ratio(x, j, goal=False):
    r = x / j
    return f"{r:.2f}" + (" (below 0.80)" if goal and r < 0.8 else "")
for c in cases:
    j, jit = t[("jx_eager", c)], t[("jx_jit", c)]
    dr, once, meas = t[("fftw_estimate", c)], t[("fftw_estimate_out_once", c)], t[("fftw_measure", c)]
    cells = [c, f"{j:.3f}", f"{jit:.3f}", f"{dr:.3f}", ratio(dr, j, True), ratio(dr, jit, True),
             f"{once:.3f}", f"{t[('fftw_estimate_4k', c)]:.3f}", f"{meas:.3f}", ratio(meas, j)]
    for lib in ("numpy", "torch"):
        p = peer.get(f"{lib} {c}")
        cells += [f"{p:.3f}", f"{p / j:.2f}x"] if p else ["", ""]
    print("| " + " | ".join(cells) + " |")
for (row, c), v in sorted(t.items()):
    if row == "scale_pass":
        print(f"\njx's IFFT scaling pass alone ({c}): {v:.3f} ms")
PY
