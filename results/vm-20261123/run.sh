#!/usr/bin/env bash
# The runs in this folder, as they were made (2 ranks, this 2-core VM), from the repository root:
#   bash results/vm-20261123/run.sh build results/vm-20261123
# Issue 13's comparisons: the new collectives 1 KiB-64 MiB on MPICH, the engine (its
# shared-memory buffers) and the engine on plain buffers, back to back per collective, each
# size the median of 3 passes; barrier; a Zipf-skewed alltoallv; the sharded (FSDP, ZeRO-2)
# and MoE (Mixtral) replays; the copy bound. Then plots and summary.md.
set -euo pipefail
build=${1:-build}
out=${2:-results/vm-20261123}
mkdir -p "$out"
run() {  # run NAME BENCH ARGS...
  local name=$1 bench=$2
  shift 2
  echo "== $name: cb_$bench $*"
  mpirun -n 2 "$build/cb_$bench" -J "$out/$name.json" "$@" | tee "$out/$name.txt"
}
"$build/cb_info" -J "$out/info.json" > "$out/info.txt"
"$build/cb_copybw" -J "$out/copy_bw.json" | tee "$out/copy_bw.txt"
for coll in allgather reduce_scatter reduce alltoallv; do
  for variant in mpi engine engine-plain; do
    args=(--backend "${variant%%-*}")
    [ "$variant" = engine-plain ] && args+=(--alloc plain)
    run "$coll.$variant.host" "$coll" "${args[@]}" -m 1K:64M --repeat 3 -c
  done
done
for backend in mpi engine; do
  run "alltoallv.$backend-zipf.host" alltoallv --backend "$backend" --counts zipf:1.2 \
    -m 1K:16M --repeat 3 -c
  run "barrier.$backend.host" barrier --backend "$backend" --repeat 3
done
for spec in "gpt2 --parallel fsdp|gpt2-fsdp" "gpt2 --parallel zero2|gpt2-zero2" \
            "mixtral-8x7b --tokens 1024 -T bf16|mixtral-uniform" \
            "mixtral-8x7b --tokens 1024 -T bf16 --counts zipf:1.2|mixtral-zipf"; do
  read -r -a model <<< "${spec%|*}"
  for compute in none trace; do
    for backend in mpi engine; do
      run "replay-${spec#*|}-$compute.$backend.host" replay --backend "$backend" \
        --model "${model[@]}" --compute "$compute" -i 5 -x 1 --repeat 3 -c
    done
  done
done
bash scripts/plots.sh "$out" mpi
