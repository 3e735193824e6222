#!/usr/bin/env bash
# Issue 36's "Done when" check of interleaved series (docs/statistics.md), 2 ranks here:
#   scripts/verdict_check.sh BUILD_DIR OUTDIR
#   CB_RUNS=2 CB_CHECK_ARGS="-i 20 --iterations-large 5" scripts/verdict_check.sh build /tmp/vc
#                                                                              (a smoke run)
# CB_RUNS times in a row (default 10), each a separate launch per pair and size:
# BUILD_DIR/cb_allreduce --backend mpi,engine and --backend mpi,mpi at each size of
# CB_SIZES (default "8 64K 4M", one size per launch: -m S:S), -c, --seed = the launch's
# number (each launch its own shuffled order; CB_SEED=N: N for every launch), the
# benchmark's default iterations plus CB_CHECK_ARGS. Writes OUTDIR/raw/rNN.<pair>.<size>.json,
# OUTDIR/failures.txt for a launch that failed and OUTDIR/tree_revision.txt (the source
# tree's git revision), then runs scripts/verdict_check.py OUTDIR: OUTDIR/verdict_check.json
# (per pair and size: the verdicts, the ratio intervals, whether they all overlap, the
# majority verdict and its count; the git revisions) and OUTDIR/verdict_check.md (tables
# generated from that JSON, also printed). Exit status: 0 when every criterion holds (the
# same verdict in at least 9 of 10 launches for mpi,engine at each size, "indistinguishable"
# in at least 9 of 10 for mpi,mpi, the intervals of the launches overlap), 1 when one fails,
# 2 on bad usage. MPIRUN: the launcher (default mpirun). Timings need a quiet machine:
# nothing else running, no build. CB_LAUNCHES=K (at least 6): each run is K launches
# (raw/rNN.lKK.<pair>.<size>.json, seeds (run-1)*K+1 ... run*K) and its interval is over
# the launches' ratios (docs/statistics.md, "Across launches").
set -euo pipefail
usage="usage: scripts/verdict_check.sh BUILD_DIR OUTDIR"
[ $# -eq 2 ] || { echo "$usage" >&2; exit 2; }
build=$1 out=$2
exe=$build/cb_allreduce
[ -x "$exe" ] || { echo "verdict_check.sh: $exe is missing (build cb_allreduce)" >&2; exit 2; }
runs=${CB_RUNS:-10}
[[ $runs =~ ^[1-9][0-9]*$ ]] ||
  { echo "verdict_check.sh: CB_RUNS must be at least 1 (got '$runs')" >&2; exit 2; }
sizes=${CB_SIZES:-8 64K 4M}
seed=${CB_SEED:-}
[[ -z $seed || $seed =~ ^[0-9]+$ ]] ||
  { echo "verdict_check.sh: CB_SEED must be a number (got '$seed')" >&2; exit 2; }
launches=${CB_LAUNCHES:-1}
[[ $launches =~ ^[0-9]+$ ]] && { [ "$launches" = 1 ] || [ "$launches" -ge 6 ]; } ||
  { echo "verdict_check.sh: CB_LAUNCHES must be 1 or at least 6 (got '$launches')" >&2; exit 2; }
read -r -a extra <<<"${CB_CHECK_ARGS:-}"
mpirun=${MPIRUN:-mpirun}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/raw"
rm -f "$out"/raw/*.json "$out/failures.txt"
git -C "$here/.." describe --always --dirty --abbrev=12 >"$out/tree_revision.txt" 2>/dev/null ||
  echo unknown >"$out/tree_revision.txt"

for ((run = 1; run <= runs; run++)); do
  for ((l = 1; l <= launches; l++)); do
    for pair in mpi,engine mpi,mpi; do
      for size in $sizes; do
        name=r$(printf %02d "$run")
        [ "$launches" = 1 ] || name+=.l$(printf %02d "$l")
        json=$out/raw/$name.${pair/,/-}.$size.json
        cmd=("$mpirun" -n 2 "$exe" --backend "$pair" -m "$size:$size" -c -q
             --seed "${seed:-$(((run - 1) * launches + l))}" "${extra[@]}" -J "$json")
        if ! "${cmd[@]}" >"$out/last.txt" 2>&1; then
          echo "launch $run${l:+.$l} failed: ${cmd[*]}" | tee -a "$out/failures.txt" >&2
          tail -n 5 "$out/last.txt" >&2
          rm -f "$json"
        fi
      done
    done
  done
  echo "verdict_check.sh: run $run of $runs done" >&2
done
rm -f "$out/last.txt"
python3 "$here/verdict_check.py" --runs "$runs" --launches "$launches" "$out"
