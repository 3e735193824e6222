#!/usr/bin/env bash
# The engine against the MPI libraries across a rate-limited link (issue 42; docs/cluster.md,
# "Measured across a rate-limited link"):
#
#   scripts/cluster_link.sh OUT [STEP...]      STEP: link, compare, algos (default all three)
#
# Brings up 2 hosts (scripts/cluster.sh; each link at CB_CLUSTER_RATE, default 1gbit), runs
# the steps with one rank per host, and takes the cluster down (also when a step fails):
#   link     cb_latency and cb_bw between the hosts on every MPI of CB_MPIS
#            (OUT/link/{latency,bw}.MPI.json): the link's alpha and beta for the model
#   compare  scripts/compare_mpis.sh OUT/compare across the hosts (CB_HOSTFILE, CB_PPN=1,
#            CB_NP=2): each library's own allreduce, bcast and alltoall (CB_LINK_COLLS)
#            against the engine's, sizes CB_LINK_SIZES (default 4:16M) every
#            CB_LINK_STEPFACTOR-th (default 4: 4 B, 16 B, ..., 16 MiB), CB_PASSES (default 6)
#            interleaved passes; CB_COMPARE_KINDS default "mpi engine engine-plain"
#   algos    every engine algorithm that runs across the hosts (--algo all: the one-node
#            ones are refused there and skipped) on the same sizes, validated (-c),
#            CB_PASSES passes, each pass the collectives in an order shuffled anew
#            (OUT/algos/<coll>.<pass>.json; CB_SEED as for compare_mpis.sh); with
#            CB_LINK_PPN=2 (ranks per host, default 1) its 2 x PPN ranks wait by yielding
#            (--wait yield: a host has fewer cores than ranks), so that the hierarchical
#            algorithms run with ranks on each node
# MPIs: CB_MPIS (default "mpich5 openmpi5"; MPICH 4.0.2's UCX hangs in MPI_Finalize across
# hosts, docs/cluster.md), the engine on the first. Builds: compare_mpis.sh's Release
# folders (build-release/ for mpich4, build-release-MPI/ for the others; compare builds them,
# link and algos need them built). Other settings: CB_ITERS_LARGE (default 10),
# CB_CLUSTER_KEEP=1 (leave the cluster up), MPIEXEC_TIMEOUT (hydra, default 600 s).
# Timings need a quiet machine (hold `flock -x /tmp/cb_quiet.lock`). Needs root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
cd "$repo"
out=${1:-}
[ -n "$out" ] || { sed -n '/^#   scripts/,/^# Timings/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
shift
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(link compare algos)
for s in "${steps[@]}"; do
  case $s in link | compare | algos) ;; *)
    echo "cluster_link: a step is link, compare or algos (got '$s')" >&2; exit 2 ;;
  esac
done
mpis=${CB_MPIS:-mpich5 openmpi5}
engine_mpi=${mpis%% *}
colls=${CB_LINK_COLLS:-allreduce bcast alltoall}
sizes=${CB_LINK_SIZES:-4:16M}
factor=${CB_LINK_STEPFACTOR:-4}
passes=${CB_PASSES:-6}
iters_large=${CB_ITERS_LARGE:-10}
link_ppn=${CB_LINK_PPN:-1}
seed=${CB_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
[[ $passes =~ ^[1-9][0-9]*$ && $seed =~ ^[0-9]+$ && $factor =~ ^[1-9][0-9]*$ &&
   $link_ppn =~ ^[1-9][0-9]*$ ]] ||
  { echo "cluster_link: CB_PASSES, CB_SEED, CB_LINK_STEPFACTOR and CB_LINK_PPN must be whole numbers" >&2; exit 2; }
build_of() { case $1 in mpich4) echo build-release ;; *) echo "build-release-$1" ;; esac; }
real_of() { (source "$here/mpi_select.sh" && CB_MPI=$1 cb_mpi_select >/dev/null &&
             echo "${CB_MPIRUN_REAL:-mpirun}"); }
mkdir -p "$out"
out=$(cd "$out" && pwd)

# Across the hosts: Open MPI's daemons and TCP on the cluster's network only, its daemons'
# keepalive at 1 s (docs/cluster.md, "Known problems"); hydra ends a job that hangs.
net=${CB_CLUSTER_NET:-10.242.42}
export PRTE_MCA_oob_tcp_if_include=$net.0/24 OMPI_MCA_btl_tcp_if_include=$net.0/24 \
  PRTE_MCA_oob_tcp_keepalive_time=1 PRTE_MCA_oob_tcp_keepalive_intvl=1 \
  PRTE_MCA_oob_tcp_keepalive_probes=5 MPIEXEC_TIMEOUT=${MPIEXEC_TIMEOUT:-600}
bash "$here/cluster.sh" up 2 --rate "${CB_CLUSTER_RATE:-1gbit}"
cleanup() { [ "${CB_CLUSTER_KEEP:-0}" = 1 ] || bash "$here/cluster.sh" down; }
trap cleanup EXIT
# shellcheck disable=SC1091  # written by cluster.sh up
source /run/collbench-cluster/env
export CB_HOSTFILE CB_LINE_RATE_GBPS
# shellcheck source=scripts/launch.sh
source "$here/launch.sh"

run_on() {  # run_on MPI OUT.json PPN BENCH ARGS...: 2 x PPN ranks, PPN per host
  local mpi=$1 json=$2 ppn=$3 bench=$4 real build
  shift 4
  real=$(real_of "$mpi")
  build=$(build_of "$mpi")
  [ -x "$build/cb_$bench" ] || { echo "cluster_link: $build/cb_$bench is missing" >&2; return 2; }
  MPIRUN=$real cb_launch_cmd $((2 * ppn)) "$ppn" || return 2
  echo "== $(basename "$json" .json): ${CB_LAUNCH[*]:1} cb_$bench $*"
  CB_MPIRUN_REAL=$real CB_MPIRUN_AS_USERS=1 "$here/mpirun_compat.sh" "${CB_LAUNCH[@]:1}" \
    "$build/cb_$bench" -J "$json" "$@" > "${json%.json}.txt" 2>&1 ||
    { echo "cluster_link: $(basename "$json") failed (see ${json%.json}.txt)" >&2
      tail -5 "${json%.json}.txt" >&2; return 1; }
}

failed=0
for step in "${steps[@]}"; do
  echo "== cluster_link: $step ($(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg))"
  case $step in
    link)
      mkdir -p "$out/link"
      for mpi in $mpis; do
        # few large iterations: a 16 MiB message takes ~0.13 s at 1 Gbit/s (cb_bw's window
        # of 16 messages: ~2 s per iteration)
        run_on "$mpi" "$out/link/latency.$mpi.json" 1 latency -m "$sizes" --stepfactor "$factor" \
          -i 200 --iterations-large 5 --warmup-large 1 --repeat 3 || failed=$((failed + 1))
        run_on "$mpi" "$out/link/bw.$mpi.json" 1 bw -m "$sizes" --stepfactor "$factor" \
          -i 20 --iterations-large 2 --warmup-large 1 -W 16 || failed=$((failed + 1))
      done ;;
    compare)
      CB_MPIS=$mpis CB_ENGINE_MPIS=$engine_mpi CB_COLLS=$colls CB_SIZES=$sizes \
      CB_PASSES=$passes CB_SEED=$seed CB_ITERS_LARGE=$iters_large CB_PPN=1 CB_NP=2 \
      CB_COMPARE_KINDS=${CB_COMPARE_KINDS:-mpi engine engine-plain} \
      CB_COMPARE_TARGETS=${CB_COMPARE_TARGETS:-cb_allreduce cb_bcast cb_alltoall cb_latency cb_bw cb_info cb_engine_preload} \
        bash "$here/compare_mpis.sh" "$out/compare" --stepfactor "$factor" --time-limit 120 ||
        failed=$((failed + 1)) ;;
    algos)
      mkdir -p "$out/algos"
      wait_args=()
      [ "$link_ppn" = 1 ] || wait_args=(--wait yield)
      RANDOM=$seed
      for pass in $(seq 1 "$passes"); do
        read -r -a order <<<"$colls"
        for ((i = ${#order[@]} - 1; i > 0; i--)); do  # Fisher-Yates, as compare_mpis.sh
          j=$((RANDOM % (i + 1)))
          t=${order[i]} order[i]=${order[j]} order[j]=$t
        done
        for coll in "${order[@]}"; do
          run_on "$engine_mpi" "$out/algos/$coll.$pass.json" "$link_ppn" "$coll" \
            --backend engine --algo all -m "$sizes" --stepfactor "$factor" -c -i 200 \
            --iterations-large "$iters_large" --time-limit 120 "${wait_args[@]}" ||
            failed=$((failed + 1))
        done
      done ;;
  esac
done
echo "== cluster_link: done ($(date -u +%FT%TZ), seed $seed), $failed failed"
[ "$failed" = 0 ]
