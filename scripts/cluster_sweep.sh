#!/usr/bin/env bash
# The main job's sweep across the one-machine cluster (docs/cluster.md, "The main job and the
# checks on it"): brings up 2 hosts with rate-limited links, runs scripts/sweep.sh on one MPI
# with its cross-host settings, and takes the cluster down again.
#
#   scripts/cluster_sweep.sh MPI OUT [--quick]
#     MPI   mpich4      Debian's MPICH 4.0.2 (build/), over UCX; hydra's MPIEXEC_TIMEOUT ends
#                       a job that hangs in MPI_Finalize (openucx/ucx#8738)
#           mpich5-abi  MPICH 5 from the package registry (build-mpich5-abi/, through the MPI
#                       5.0 standard ABI) on its libfabric netmod over TCP
#                       (MPIR_CVAR_CH4_NETMOD=ofi FI_PROVIDER=tcp): no UCX, no hang
#           openmpi5    Open MPI 5 (build-openmpi5/), its daemons and TCP on the cluster's
#                       network only, the daemons' TCP keepalive at 1 s (5 probes)
#   Settings: CB_PPN (default 2) and CB_NP (default 4): ranks per host and of the collectives;
#   CB_CLUSTER_RATE (default 10gbit): each link's rate; CB_REPEAT: passes per size (sweep.sh);
#   CB_CLUSTER_KEEP=1: leave the cluster up at the end. Needs root (scripts/cluster.sh).
# Exit status: sweep.sh's (0 when every step ran), 2 for bad usage.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
mpi=${1:-}
out=${2:-}
quick=${3:-}
if [ -z "$mpi" ] || [ -z "$out" ]; then
  sed -n '/^#   scripts/,/^# Exit/p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
case "$quick" in "" | --quick) ;; *) echo "cluster_sweep: the third argument may only be --quick (got '$quick')" >&2; exit 2 ;; esac
net=${CB_CLUSTER_NET:-10.242.42}
case "$mpi" in
  mpich4) build=$repo/build ;;
  mpich5-abi)
    build=$repo/build-mpich5-abi
    export MPIR_CVAR_CH4_NETMOD=ofi FI_PROVIDER=tcp ;;
  openmpi5)
    build=$repo/build-openmpi5
    export PRTE_MCA_oob_tcp_if_include=$net.0/24 OMPI_MCA_btl_tcp_if_include=$net.0/24
    # a cut link ends the job in seconds instead of never (docs/cluster.md, "Known problems")
    export PRTE_MCA_oob_tcp_keepalive_time=1 PRTE_MCA_oob_tcp_keepalive_intvl=1 \
      PRTE_MCA_oob_tcp_keepalive_probes=5 ;;
  *) echo "cluster_sweep: MPI must be mpich4, mpich5-abi or openmpi5 (got '$mpi')" >&2; exit 2 ;;
esac
[ -x "$build/cb_info" ] || { echo "cluster_sweep: $build/cb_info is missing: build $build first (scripts/build.sh)" >&2; exit 2; }
export CB_MPI=$mpi
# shellcheck source=scripts/mpi_select.sh
source "$here/mpi_select.sh"
cb_mpi_select
# hydra (both MPICH): a job still running after 90 s is ended (the UCX hang in MPI_Finalize;
# every step of the quick sweep takes a few seconds)
export MPIEXEC_TIMEOUT=${MPIEXEC_TIMEOUT:-90}
export CB_PPN=${CB_PPN:-2} CB_NP=${CB_NP:-4}
bash "$here/cluster.sh" up 2 --rate "${CB_CLUSTER_RATE:-10gbit}"
cleanup() { [ "${CB_CLUSTER_KEEP:-0}" = 1 ] || bash "$here/cluster.sh" down; }
trap cleanup EXIT
# shellcheck disable=SC1091  # written by cluster.sh up
source /run/collbench-cluster/env
echo "cluster_sweep: $mpi, $CB_NP ranks $CB_PPN per host, links ${CB_CLUSTER_RATE:-10gbit}"
bash "$here/sweep.sh" "$build" "$out" ${quick:+"$quick"}
