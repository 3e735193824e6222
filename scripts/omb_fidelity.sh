#!/usr/bin/env bash
# collbench against OMB's timing method at small sizes (issue 29): cb_latency, cb_bcast,
# cb_allreduce and cb_alltoall (--backend mpi) and tests/fidelity/omb_loop.c (OMB 7.x's
# loops alone: whole-iteration MPI_Wtime pairs, the same warmup, iterations and barriers) at
# 2 ranks, ROUNDS rounds interleaved (each round runs every benchmark once, then the
# reference), best of the rounds per size; a Markdown table on stdout and DIR/fidelity.json.
# Run it on a quiet machine: the figures differ by hundredths of a microsecond.
#
#   scripts/omb_fidelity.sh [--bindir build] [--out DIR] [--rounds 5] [--sizes 4:2048]
#                           [--iters N --warmup N] [--callgrind]
#
# --iters/--warmup: the same counts for both sides at every size (default: OMB's, which
# both use). --callgrind: instead, count the instructions of each timed loop per iteration
# outside the collective and the barrier (valgrind's callgrind; repeatable on a loaded
# machine), collbench's against the reference's, for bcast, allreduce and alltoall.
set -euo pipefail
cd "$(dirname "$0")/.."
bindir=build out="" rounds=5 sizes=4:2048 iters="" warmup="" callgrind=0
while [ $# -gt 0 ]; do
  case "$1" in
    --bindir) bindir=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --callgrind) callgrind=1; shift ;;
    *) echo "omb_fidelity.sh: unknown argument '$1' (see the comment at the top)" >&2; exit 2 ;;
  esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "omb_fidelity.sh: --rounds must be at least 1" >&2; exit 2; }
[[ $sizes =~ ^[1-9][0-9]*:[1-9][0-9]*$ ]] ||
  { echo "omb_fidelity.sh: --sizes must be MIN:MAX in bytes (got '$sizes')" >&2; exit 2; }
if [ -n "$iters$warmup" ] && ! [[ $iters =~ ^[1-9][0-9]*$ && $warmup =~ ^[0-9]+$ ]]; then
  echo "omb_fidelity.sh: give --iters N (at least 1) and --warmup N (0 or more) together" >&2
  exit 2
fi
ref=$bindir/tests/fidelity/cb_omb_loop
for exe in "$bindir"/cb_latency "$bindir"/cb_bcast "$bindir"/cb_allreduce "$bindir"/cb_alltoall "$ref"; do
  [ -x "$exe" ] || {
    echo "omb_fidelity.sh: $exe is missing: build with -DCOLLBENCH_BUILD_TESTS=ON (CB_BUILD_TARGETS=\"cb_latency cb_bcast cb_allreduce cb_alltoall cb_omb_loop\")" >&2
    exit 2
  }
done
out=${out:-results/omb-fidelity-$(hostname)-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
mpirun=${MPIRUN:-mpirun}
min=${sizes%%:*} max=${sizes##*:}
cb_counts=() ref_counts=()
if [ -n "$iters" ]; then cb_counts=(-i "$iters" -x "$warmup"); ref_counts=("$iters" "$warmup"); fi

if [ "$callgrind" = 1 ]; then
  command -v valgrind >/dev/null || { echo "omb_fidelity.sh: --callgrind needs valgrind" >&2; exit 2; }
  n=${iters:-2000} w=${warmup:-100}
  for b in bcast allreduce alltoall; do
    # Only the timed loops are collected (--toggle-collect), on both ranks.
    "$mpirun" -n 2 valgrind -q --tool=callgrind --callgrind-out-file="$out/cg.cb_$b.%p" \
      --toggle-collect='*CollectiveRunner::calls*' \
      "$bindir/cb_$b" --backend mpi -m "$min:$min" -i "$n" -x "$w" -q >/dev/null
    "$mpirun" -n 2 valgrind -q --tool=callgrind --callgrind-out-file="$out/cg.ref_$b.%p" \
      --toggle-collect=collective_loop "$ref" "$b" "$min" "$min" "$n" "$w" >/dev/null
  done
  exec python3 scripts/omb_fidelity.py "$out" --callgrind --iters "$n" --warmup "$w"
fi

for r in $(seq 1 "$rounds"); do
  for b in latency bcast allreduce alltoall; do
    echo "== omb_fidelity: round $r of $rounds: $b" >&2
    "$mpirun" -n 2 "$bindir/cb_$b" --backend mpi -m "$min:$max" "${cb_counts[@]}" -q \
      -J "$out/cb_$b.$r.json" >/dev/null
    "$mpirun" -n 2 "$ref" "$b" "$min" "$max" "${ref_counts[@]}" >"$out/ref_$b.$r.txt"
    if [ "$b" != latency ]; then
      "$mpirun" -n 2 "$ref" "$b" "$min" "$max" "${ref_counts[@]}" --two-comms >"$out/ref2_$b.$r.txt"
    fi
  done
done
python3 scripts/omb_fidelity.py "$out"
