#!/usr/bin/env bash
# How the runs in this folder were made (this 2-core VM; README.md says which were kept),
# from the repository root:
#   bash results/vm-20261123/model/run.sh build results/vm-20261123/model
# The engine (shared memory on, its own buffers) in yield-wait mode, which more ranks than
# cores need: pt2pt latency and every allreduce and bcast algorithm at 2 ranks (the fit),
# then the same collectives at 3..8 ranks (the check); then scripts/model.py.
set -euo pipefail
build=${1:-build}
out=${2:-results/vm-20261123/model}
mkdir -p "$out"
common=(--backend engine --wait yield --repeat 3)
mpirun -n 2 "$build/cb_latency" "${common[@]}" -m 8:4M -i 1000 -x 100 -c \
  -J "$out/np2.latency.json" > "$out/np2.latency.txt"
for n in 2 3 4 5 6 7 8; do
  for coll in allreduce bcast; do
    echo "== $coll, $n ranks"
    mpirun -n "$n" "$build/cb_$coll" "${common[@]}" --algo all -m 8:4M -i 50 -x 5 -c \
      -J "$out/np$n.$coll.json" > "$out/np$n.$coll.txt"
  done
done
# Fit at 2 ranks, check at 3..8; the projection also for nodes of 8 ranks on a 100 Gb/s
# network (2 us, 0.08 ns/B: an assumption, not a measurement).
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3  # Debian's python3-matplotlib
"$py" scripts/model.py -o "$out" "$out"/np2.*.json --ranks-per-node 8 --inter-alpha 2 \
  --inter-beta 0.08 --check "$out"/np[3-8].*.json
"$py" scripts/model.py -o "$out/fitted" --params fitted "$out"/np2.*.json --no-plot \
  --check "$out"/np[3-8].*.json
