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
# nothing else running, no build.
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
read -r -a extra <<<"${CB_CHECK_ARGS:-}"
mpirun=${MPIRUN:-mpirun}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/raw"
rm -f "$out"/raw/*.json "$out/failures.txt"
git -C "$here/.." describe --always --dirty --abbrev=12 >"$out/tree_revision.txt" 2>/dev/null ||
  echo unknown >"$out/tree_revision.txt"

for ((run = 1; run <= runs; run++)); do
  for pair in mpi,engine mpi,mpi; do
    for size in $sizes; do
      json=$out/raw/r$(printf %02d "$run").${pair/,/-}.$size.json
      cmd=("$mpirun" -n 2 "$exe" --backend "$pair" -m "$size:$size" -c -q --seed "${seed:-$run}"
           "${extra[@]}" -J "$json")
      if ! "${cmd[@]}" >"$out/last.txt" 2>&1; then
        echo "launch $run failed: ${cmd[*]}" | tee -a "$out/failures.txt" >&2
        tail -n 5 "$out/last.txt" >&2
        rm -f "$json"
      fi
    done
  done
  echo "verdict_check.sh: launch $run of $runs done" >&2
done
rm -f "$out/last.txt"
python3 "$here/verdict_check.py" --runs "$runs" "$out"
