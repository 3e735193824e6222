#!/usr/bin/env bash
# The one place that knows what a launcher of this machine needs besides `-n NP ...` to run
# collbench's jobs, per MPI implementation (the tests' launcher: tests/integration/cbtest.py
# puts this in front of an Open MPI mpirun; scripts/mpi_select.sh sets MPIRUN to it):
#   CB_MPIRUN_REAL=/path/to/mpirun scripts/mpirun_compat.sh -n 4 ./app ...
# The flavour comes from `mpirun --version` ("Open MPI"/OpenRTE/PRRTE: openmpi, HYDRA:
# hydra) or CB_MPIRUN_FLAVOUR (openmpi, hydra, other).
# - The tests' launch (the default): no binding, so that two jobs side by side (ctest -j2)
#   never share a bound core. Open MPI (mpirun/prterun): --oversubscribe (a 2-core machine
#   runs up to 8 ranks, which wait by yielding: the benchmarks' yield mode, the preload's
#   CB_PRELOAD_WAIT) and --bind-to none (hydra binds nothing by default); MPICH's hydra and
#   anything else: run unchanged.
# - With CB_MPIRUN_AS_USERS=1 (scripts/compare_mpis.sh: a comparison launches every library
#   as its users would, and binds all of them alike): Open MPI keeps its default binding
#   (to cores for 2 ranks), with --oversubscribe only when the job has more ranks (-n/-np)
#   than the machine has cores; hydra gets -bind-to core when the ranks fit the cores (and
#   nothing otherwise: binding oversubscribed ranks would stack them on a core); anything
#   else runs unchanged. The binding each rank got is in every document
#   (environment.binding).
# - Open MPI as root: OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1. Ranks on
#   this node inherit mpirun's environment (LD_PRELOAD, CB_*), under Open MPI as under hydra;
#   ranks on other hosts (a hosts file or host list given) get hydra's whole environment
#   but only what Open MPI is told to pass: -x NAME for every CB_* variable and LD_PRELOAD
#   set here (docs/cluster.md).
set -euo pipefail
real=${CB_MPIRUN_REAL:-mpirun}
case "${1:-}" in
  --version | -V | --help | -h) exec "$real" "$@" ;;
esac
flavour=${CB_MPIRUN_FLAVOUR:-}
if [ -z "$flavour" ]; then
  case "$("$real" --version 2>&1 || true)" in
    *"Open MPI"* | *OpenRTE* | *"Open RTE"* | *PRRTE*) flavour=openmpi ;;
    *HYDRA*) flavour=hydra ;;
    *) flavour=other ;;
  esac
fi
fits=1  # the job's ranks (-n/-np) fit the machine's cores
np=1 args=("$@") remote=0
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    -n | -np) np=${args[i + 1]:-1} ;;
    --hostfile | -hostfile | --machinefile | -machinefile | --host | -host | -H) remote=1 ;;
  esac
done
[[ $np =~ ^[0-9]+$ ]] && [ "$np" -gt "$(nproc)" ] && fits=0
users=${CB_MPIRUN_AS_USERS:-0}
if [ "$flavour" = openmpi ]; then
  if [ "$(id -u)" -eq 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi
  if [ "$remote" = 1 ]; then
    pass=()
    for v in $(compgen -e | grep -E '^(CB_[A-Za-z0-9_]*|LD_PRELOAD)$' | grep -v '^CB_MPIRUN_' || true); do pass+=(-x "$v"); done
    set -- "${pass[@]}" "$@"
  fi
  if [ "$users" = 1 ]; then
    if [ "$fits" = 0 ]; then exec "$real" --oversubscribe "$@"; fi
    exec "$real" "$@"
  fi
  exec "$real" --oversubscribe --bind-to none "$@"
fi
if [ "$flavour" = hydra ] && [ "$users" = 1 ] && [ "$fits" = 1 ]; then
  exec "$real" -bind-to core "$@"
fi
exec "$real" "$@"
