#!/usr/bin/env bash
# The one place that knows what a launcher of this machine needs besides `-n NP ...` to run
# collbench's jobs, per MPI implementation (the tests' launcher: tests/integration/cbtest.py
# puts this in front of an Open MPI mpirun; scripts/mpi_select.sh sets MPIRUN to it):
#   CB_MPIRUN_REAL=/path/to/mpirun scripts/mpirun_compat.sh -n 4 ./app ...
# - Open MPI (mpirun/prterun): --oversubscribe (a 2-core machine runs up to 8 ranks, which
#   wait by yielding: the benchmarks' yield mode, the preload's CB_PRELOAD_WAIT), --bind-to
#   none (as MPICH's hydra: two jobs side by side, ctest -j2, must not share a bound core),
#   and as root OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1. Ranks on this
#   node inherit mpirun's environment (LD_PRELOAD, CB_*), as under hydra.
#   With CB_MPIRUN_AS_USERS=1 (scripts/compare_mpis.sh: a comparison launches each library
#   as its users would) Open MPI keeps its default binding, and --oversubscribe is added
#   only when the job has more ranks (-n/-np) than the machine has cores. The binding each
#   rank got is in every document (environment.binding).
# - MPICH's hydra and anything else: run unchanged.
set -euo pipefail
real=${CB_MPIRUN_REAL:-mpirun}
case "${1:-}" in
  --version | -V | --help | -h) exec "$real" "$@" ;;
esac
flavour=${CB_MPIRUN_FLAVOUR:-}
if [ -z "$flavour" ]; then
  case "$("$real" --version 2>&1 || true)" in
    *"Open MPI"* | *OpenRTE* | *"Open RTE"* | *PRRTE*) flavour=openmpi ;;
    *) flavour=other ;;
  esac
fi
if [ "$flavour" = openmpi ]; then
  if [ "$(id -u)" -eq 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi
  if [ "${CB_MPIRUN_AS_USERS:-0}" = 1 ]; then
    np=1 args=("$@")
    for ((i = 0; i < ${#args[@]}; i++)); do
      case "${args[i]}" in -n | -np) np=${args[i + 1]:-1} ;; esac
    done
    if [ "$np" -gt "$(nproc)" ]; then exec "$real" --oversubscribe "$@"; fi
    exec "$real" "$@"
  fi
  exec "$real" --oversubscribe --bind-to none "$@"
fi
exec "$real" "$@"
