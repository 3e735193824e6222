#!/usr/bin/env bash
# How collbench's scripts start an MPI job: the one place that turns a rank count and a
# rank layout into a launcher command line (scripts/sweep.sh sources it, scripts/tune.py
# runs it with --print0).
#
#   source scripts/launch.sh
#   cb_launch_cmd NP [PPN] || exit 2     # sets the array CB_LAUNCH, e.g. (mpirun -n 2)
#   "${CB_LAUNCH[@]}" ./build/cb_bw -m 1:4M
#   cb_launch NP PPN CMD [ARGS...]       # the same in one step (PPN may be "")
#
#   bash scripts/launch.sh --print NP [PPN]    the command, shell-quoted, on one line
#   bash scripts/launch.sh --print0 NP [PPN]   the same, one argument per NUL
#   bash scripts/launch.sh --describe          the launcher and layout in force, in words
#
# Settings (environment; PPN given to cb_launch_cmd wins over CB_PPN):
#   CB_LAUNCHER        auto (default): srun inside a Slurm allocation (SLURM_JOB_ID set),
#                      mpirun elsewhere; or mpirun, srun
#   MPIRUN, SRUN       the executables (default mpirun, srun)
#   CB_HOSTFILE        mpirun only: the hosts (MPICH hydra: -f FILE; Open MPI: --hostfile FILE)
#   CB_PPN             ranks per node (hydra: -ppn N; Open MPI: --map-by ppr:N:node;
#                      srun: -N NODES --ntasks-per-node N)
#   CB_MPIRUN_FLAVOUR  hydra or openmpi: which mpirun this is (default: read from
#                      `$MPIRUN --version`; needed only for CB_HOSTFILE and CB_PPN)
#   CB_LAUNCH_ARGS     more launcher arguments, split at spaces (-bind-to core, --mpi=pmix)
# Without any of them (a laptop, a VM): `mpirun -n NP`, as always.
# A bad setting prints one line "launch: error: ..." on stderr and returns 2.

_cb_launch_error() {
  echo "launch: error: $*" >&2
  return 2
}

# cb_launcher: prints mpirun or srun (CB_LAUNCHER resolved).
cb_launcher() {
  case "${CB_LAUNCHER:-auto}" in
    auto) if [ -n "${SLURM_JOB_ID:-}" ]; then echo srun; else echo mpirun; fi ;;
    mpirun | srun) echo "$CB_LAUNCHER" ;;
    *) _cb_launch_error "CB_LAUNCHER must be auto, mpirun or srun (got '$CB_LAUNCHER')" ;;
  esac
}

# cb_mpirun_flavour: prints hydra (MPICH, Intel MPI, MVAPICH), openmpi or unknown.
cb_mpirun_flavour() {
  case "${CB_MPIRUN_FLAVOUR:-}" in
    hydra | openmpi) echo "$CB_MPIRUN_FLAVOUR"; return 0 ;;
    "") ;;
    *) _cb_launch_error "CB_MPIRUN_FLAVOUR must be hydra or openmpi (got '$CB_MPIRUN_FLAVOUR')"
       return ;;
  esac
  local version
  version=$("${MPIRUN:-mpirun}" --version 2>&1 || true)
  case "$version" in
    *HYDRA* | *"Intel(R) MPI"*) echo hydra ;;
    *"Open MPI"* | *OpenRTE* | *"Open RTE"*) echo openmpi ;;
    *) echo unknown ;;
  esac
}

_cb_positive() {  # _cb_positive NAME VALUE: a whole number >= 1
  case "$2" in
    "" | *[!0-9]* | 0*) _cb_launch_error "$1 must be a whole number, at least 1 (got '$2')" ;;
    *) return 0 ;;
  esac
}

# cb_launch_cmd NP [PPN]: sets CB_LAUNCH to the launcher command for NP ranks, PPN per node
# (default CB_PPN; empty: the launcher's own placement).
cb_launch_cmd() {
  local np=${1:-} ppn=${2-${CB_PPN:-}} launcher flavour extra=()
  CB_LAUNCH=()
  _cb_positive "the rank count" "$np" || return
  local what="CB_PPN (ranks per node)"
  [ $# -ge 2 ] && what="the ranks per node"
  if [ -n "$ppn" ]; then _cb_positive "$what" "$ppn" || return; fi
  launcher=$(cb_launcher) || return
  # shellcheck disable=SC2206  # split at spaces on purpose
  [ -n "${CB_LAUNCH_ARGS:-}" ] && extra=(${CB_LAUNCH_ARGS})
  if [ "$launcher" = srun ]; then
    if [ -n "${CB_HOSTFILE:-}" ]; then
      _cb_launch_error "CB_HOSTFILE is for mpirun; under srun the Slurm allocation gives the" \
        "nodes (CB_LAUNCHER=mpirun to use a hosts file)"
      return
    fi
    CB_LAUNCH=("${SRUN:-srun}" -n "$np")
    [ -n "$ppn" ] && CB_LAUNCH+=(-N $(((np + ppn - 1) / ppn)) --ntasks-per-node "$ppn")
    # a rank that fails ends the step, as mpirun ends the job (srun's default may not)
    CB_LAUNCH+=(--kill-on-bad-exit=1 "${extra[@]}")
    return 0
  fi
  CB_LAUNCH=("${MPIRUN:-mpirun}")
  if [ -n "${CB_HOSTFILE:-}" ] || [ -n "$ppn" ]; then
    if [ -n "${CB_HOSTFILE:-}" ] && [ ! -r "$CB_HOSTFILE" ]; then
      _cb_launch_error "CB_HOSTFILE '$CB_HOSTFILE' cannot be read"
      return
    fi
    # `mpirun --version` once per mpirun and setting (a sweep builds ~100 command lines)
    local key="${MPIRUN:-mpirun}|${CB_MPIRUN_FLAVOUR:-}"
    if [ "${_cb_flavour_key:-}" != "$key" ]; then
      _cb_flavour=$(cb_mpirun_flavour) || return
      _cb_flavour_key=$key
    fi
    flavour=$_cb_flavour
    case "$flavour" in
      hydra)
        [ -n "${CB_HOSTFILE:-}" ] && CB_LAUNCH+=(-f "$CB_HOSTFILE")
        [ -n "$ppn" ] && CB_LAUNCH+=(-ppn "$ppn") ;;
      openmpi)
        [ -n "${CB_HOSTFILE:-}" ] && CB_LAUNCH+=(--hostfile "$CB_HOSTFILE")
        [ -n "$ppn" ] && CB_LAUNCH+=(--map-by "ppr:$ppn:node") ;;
      *)
        _cb_launch_error "cannot tell which mpirun '${MPIRUN:-mpirun}' is (neither MPICH hydra" \
          "nor Open MPI in its --version), so not how to give it a hosts file or ranks per" \
          "node; set CB_MPIRUN_FLAVOUR=hydra or openmpi"
        return ;;
    esac
  fi
  CB_LAUNCH+=(-n "$np" "${extra[@]}")
}

# cb_launch NP PPN CMD [ARGS...]: runs CMD under the launcher (PPN "" = CB_PPN).
cb_launch() {
  local np=$1 ppn=$2
  shift 2
  if [ -n "$ppn" ]; then
    cb_launch_cmd "$np" "$ppn" || return
  else
    cb_launch_cmd "$np" || return
  fi
  "${CB_LAUNCH[@]}" "$@"
}

# cb_launch_describe: one line saying what cb_launch_cmd will use.
cb_launch_describe() {
  local launcher ppn_text="the launcher's placement"
  launcher=$(cb_launcher) || return
  [ -n "${CB_PPN:-}" ] && ppn_text=$CB_PPN
  if [ "$launcher" = srun ]; then
    local nodes=${SLURM_JOB_NUM_NODES:-${SLURM_NNODES:-}}
    local job=${SLURM_JOB_ID:-none: srun makes its own allocation}
    echo "srun (Slurm job $job${nodes:+, $nodes nodes}), ranks per node: $ppn_text"
  else
    local what=${MPIRUN:-mpirun}
    if [ -n "${CB_HOSTFILE:-}${CB_PPN:-}" ]; then what+=" ($(cb_mpirun_flavour))"; fi
    echo "$what, hosts: ${CB_HOSTFILE:-this machine}, ranks per node: $ppn_text"
  fi
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then  # run, not sourced
  set -uo pipefail
  case "${1:-}" in
    --print | --print0)
      mode=$1
      shift
      if [ $# -ge 2 ]; then
        cb_launch_cmd "$1" "$2" || exit 2
      else
        cb_launch_cmd "${1:-}" || exit 2
      fi
      if [ "$mode" = --print ]; then
        printf '%q ' "${CB_LAUNCH[@]}" | sed 's/ $//'
        echo
      else
        printf '%s\0' "${CB_LAUNCH[@]}"
      fi ;;
    --describe) cb_launch_describe || exit 2 ;;
    *)
      echo "usage: scripts/launch.sh --print NP [PPN] | --print0 NP [PPN] | --describe" >&2
      exit 2 ;;
  esac
fi
