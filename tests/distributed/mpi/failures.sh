#!/usr/bin/env bash
# One process of a 2-process run fails; the other must end with an error, not hang
# (issue 18). Usage: failures.sh PROGRAM MPIRUN [MPIRUN FLAGS...]
set -uo pipefail
exe=$1
shift
launcher=("$@")
check() {  # mode, the limit in seconds, what the output must say
  local mode=$1 limit=$2 want=$3 start out rc elapsed
  start=$(date +%s)
  out=$(JX_DISTRIBUTED_TIMEOUT=3 timeout 120 "${launcher[@]}" "$exe" "$mode" 2>&1)
  rc=$?
  elapsed=$(( $(date +%s) - start ))
  if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ] || [ "$elapsed" -gt "$limit" ]; then
    printf 'FAIL (%s): exit %s after %s s (want an error within %s s)\n%s\n' "$mode" "$rc" "$elapsed" "$limit" "$out"
    exit 1
  fi
  if ! grep -q -- "$want" <<<"$out"; then
    printf 'FAIL (%s): the output does not say "%s"\n%s\n' "$mode" "$want" "$out"
    exit 1
  fi
  printf '%s: exit %s after %s s: %s\n' "$mode" "$rc" "$elapsed" "$(grep -m1 -- "$want" <<<"$out")"
}
check kill 60 "exited on signal 9"
check stall 60 "waited 3 s for the other processes"
