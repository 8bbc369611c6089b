#!/usr/bin/env bash
# Cholesky and SVD (float32/float64, n = 256 and 1024) through jx::lax::linalg against the
# same LAPACK routines called directly (issue 20: jx at no less than 80% of the direct
# call), and beside NumPy and PyTorch on the same LAPACK, in one run: bench_linalg
# (repetitions randomly interleaved, medians), bench/peers/linalg_peer.py right after, then
# the Cholesky rows once more with OMP_WAIT_POLICY=passive (libgomp's idle workers sleep at
# once instead of spinning; bench/README.md, "Linear algebra", says why that matters).
# Usage: bench/linalg.sh [--coretype NAME] [--hold-lock] [--no-build] [build-dir]
#   --coretype NAME  OPENBLAS_CORETYPE for every side, e.g. Cooperlake (default: OpenBLAS's
#                    own detection, which in Debian's 0.3.21 falls back to Prescott, SSE3
#                    kernels, on Xeons newer than it knows)
#   --hold-lock      hold the build lock for the whole run, not only the build, so that
#                    builds of others on a shared machine wait instead of skewing the timings
#   --no-build       run the bench_linalg already built in build-dir
# build-dir defaults to build (configured here if it is not yet). Needs python3-numpy and
# python3-torch (scripts/install-deps --bench).
set -euo pipefail
cd "$(dirname "$0")/.."
coretype="" hold=0 nobuild=0 build=build
while [ $# -gt 0 ]; do
  case "$1" in
    --coretype) coretype=$2; shift 2 ;;
    --hold-lock) hold=1; shift ;;
    --no-build) nobuild=1; shift ;;
    -*) echo "linalg.sh: unknown option '$1'" >&2; exit 2 ;;
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
  ! "${locked[@]}" nice cmake --build "$build" --target bench_linalg -j2 > "$out/build.log" 2>&1; then
  tail -30 "$out/build.log" >&2
  echo "linalg.sh: building bench_linalg failed (above)" >&2
  exit 1
fi
export OMP_NUM_THREADS=2  # jx's OpenMP, OpenBLAS's threads and PyTorch's, alike
# The same malloc tuning as the other peer comparisons (../shared/peers/README.md).
export GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967295
# The machine-wide OpenBLAS settings for old builds go (as in conv.sh), for every side.
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE OMP_WAIT_POLICY
[ -z "$coretype" ] || export OPENBLAS_CORETYPE=$coretype
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$build/bench/bench_linalg" --benchmark_format=json --benchmark_repetitions=5 \
  --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true > "$out/jx.json"
/usr/bin/python3 bench/peers/linalg_peer.py --threads 2 --json "$out/peer.json" | grep '^#'
OMP_WAIT_POLICY=passive "$build/bench/bench_linalg" --benchmark_filter='cholesky|potrf|symmetrize' \
  --benchmark_format=json --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true \
  --benchmark_report_aggregates_only=true > "$out/passive.json"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg); raw results in $out"
/usr/bin/python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
def medians(path):
    d = json.load(open(path))
    r = {}
    for b in d["benchmarks"]:
        if b.get("aggregate_name") == "median":
            r[b["run_name"].replace("/real_time", "")] = b["real_time"] * {"ms": 1, "us": 1e-3, "ns": 1e-6}[b["time_unit"]]
    return r, d["context"]
jx, ctx = medians(f"{out}/jx.json")
passive, _ = medians(f"{out}/passive.json")
peer = json.load(open(f"{out}/peer.json"))
print(f"jx: {ctx.get('lapack', '?')}; jx's OpenMP threads {ctx.get('omp_max_threads', '?')}")
print()
print("jx vs X = X's time / jx's time (1.00 = as fast; issue 20 asks >= 0.80 against the direct call)")
print()
print("| op | dtype | n | jx ms | direct LAPACK ms | jx vs direct | NumPy ms | jx vs NumPy | PyTorch ms | jx vs PyTorch |")
print("|---|---|---|---|---|---|---|---|---|---|")
ctype = {"float32": "float", "float64": "double"}
rows = [("cholesky", "BM_jx_cholesky", "BM_lapack_potrf", "cholesky", jx),
        ("cholesky, symmetrize_input=false", "BM_jx_cholesky_nosym", "BM_lapack_potrf", None, jx),
        ("cholesky, jit", "BM_jx_cholesky_jit", "BM_lapack_potrf", None, jx),
        ("(x + x^T) / 2 alone (symmetrize_input's part)", "BM_jx_symmetrize", None, None, jx),
        ("svd, full_matrices=false", "BM_jx_svd", "BM_lapack_gesdd_S", "svd", jx),
        ("svd, compute_uv=false", "BM_jx_svdvals", "BM_lapack_gesdd_N", "svdvals", jx),
        ("cholesky, OMP_WAIT_POLICY=passive", "BM_jx_cholesky", "BM_lapack_potrf", None, passive),
        ("cholesky, jit, OMP_WAIT_POLICY=passive", "BM_jx_cholesky_jit", "BM_lapack_potrf", None, passive),
        ("(x + x^T) / 2 alone, OMP_WAIT_POLICY=passive", "BM_jx_symmetrize", None, None, passive)]
for what, jk, dk, pk, src in rows:
    for n in (256, 1024):
        for dt in ("float32", "float64"):
            key = lambda b: f"{b}<{ctype[dt]}>/{n}"
            j = src[key(jk)]
            cells = [what, dt, str(n), f"{j:.3f}"]
            if dk:
                d = src[key(dk)]
                cells += [f"{d:.3f}", f"{d / j:.2f}" + ("" if d / j >= 0.8 else " (below 0.80)")]
            else:
                cells += ["", ""]
            for lib in ("numpy", "torch"):
                p = peer.get(f"{lib} {pk} {dt} {n}") if pk else None
                cells += [f"{p:.3f}", f"{p / j:.2f}x"] if p else ["", ""]
            print("| " + " | ".join(cells) + " |")
PY
