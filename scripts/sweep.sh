#!/usr/bin/env bash
# The default sweep: scripts/sweep.sh BUILD_DIR OUTDIR. One JSON per benchmark and
# backend (<bench>.<backend>.<mem>.json) plus the tables in <bench>.<backend>.<mem>.txt.
set -euo pipefail
build=$1
out=$2
mkdir -p "$out"
mpirun=${MPIRUN:-mpirun}

run() {  # run NP BENCH BACKEND [args...]
  local np=$1 bench=$2 backend=$3
  shift 3
  local tag="$bench.$backend.host"
  echo "== cb_$bench --backend $backend $*"
  if ! "$mpirun" -n "$np" "$build/cb_$bench" --backend "$backend" -J "$out/$tag.json" "$@" \
      | tee "$out/$tag.txt"; then
    echo "sweep: cb_$bench --backend $backend failed (see above); continuing" >&2
  fi
}

for backend in mpi; do
  run 2 latency "$backend" -c
  run 2 bw "$backend" -c
  run 2 bibw "$backend" -c
  run 2 mbw_mr "$backend" -c
  for coll in allreduce bcast alltoall; do run 2 "$coll" "$backend" -c; done
  for coll in iallreduce ibcast ialltoall; do
    run 2 "$coll" "$backend" -c -t 0
    mv "$out/$coll.$backend.host.json" "$out/$coll-t0.$backend.host.json"
    mv "$out/$coll.$backend.host.txt" "$out/$coll-t0.$backend.host.txt"
    run 2 "$coll" "$backend" -c -t 10
  done
done
echo "sweep: results in $out"
