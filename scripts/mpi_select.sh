# Which MPI a build, the tests and the main job use (sourced by scripts/build.sh, test.sh
# and run.sh):
#   CB_MPI=mpich4      Debian's MPICH 4.0.2 (mpicxx, mpirun on PATH): the default, build/
#   CB_MPI=mpich5      MPICH 5.0.2 from the package registry, build-mpich5/
#   CB_MPI=mpich5-abi  the same library through the MPI 5.0 standard ABI (mpicxx_abi,
#                      libmpi_abi.so; -DCOLLBENCH_MPI_ABI=ON), build-mpich5-abi/
#   CB_MPI=openmpi5    Open MPI 5.0.11 from the package registry, build-openmpi5/
#   CB_MPI=openmpi4    Debian's Open MPI 4.1.4 (optional; scripts/install_mpi.sh openmpi4)
# The registry's MPIs are installed on first use (scripts/install_mpi.sh, no root).
# After cb_mpi_select: CB_MPI_CMAKE (array: cmake arguments), CB_MPI_BUILD (the build folder
# for a default name BASE: cb_mpi_build_dir BASE), MPIRUN and CB_MPIRUN_REAL exported.
# Without CB_MPI nothing changes: no cmake arguments, build/, MPIRUN as it was.

cb_mpi_select() {
  local mpi=${CB_MPI:-} here prefix
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  CB_MPI_CMAKE=()
  case "$mpi" in
    "" | mpich4) return 0 ;;  # the default: mpicxx and mpirun on PATH (install_deps.sh pins MPICH)
    mpich5 | mpich5-abi) prefix=$(bash "$here/install_mpi.sh" mpich5) || return ;;
    openmpi5) prefix=$(bash "$here/install_mpi.sh" openmpi5) || return ;;
    openmpi4)
      [ -x /usr/bin/mpicxx.openmpi ] || {
        echo "mpi_select: CB_MPI=openmpi4 needs Debian's Open MPI 4 (scripts/install_mpi.sh openmpi4)" >&2
        return 2
      }
      CB_MPI_CMAKE=(-DMPI_C_COMPILER=/usr/bin/mpicc.openmpi -DMPI_CXX_COMPILER=/usr/bin/mpicxx.openmpi
                    -DMPIEXEC_EXECUTABLE=/usr/bin/mpirun.openmpi)
      export CB_MPIRUN_REAL=/usr/bin/mpirun.openmpi MPIRUN=$here/mpirun_compat.sh
      return 0 ;;
    *) echo "mpi_select: CB_MPI must be mpich4, mpich5, mpich5-abi, openmpi5 or openmpi4 (got '$mpi')" >&2
       return 2 ;;
  esac
  if [ "$mpi" = mpich5-abi ]; then
    CB_MPI_CMAKE=(-DCOLLBENCH_MPI_ABI=ON -DMPI_C_COMPILER="$prefix/bin/mpicc_abi"
                  -DMPI_CXX_COMPILER="$prefix/bin/mpicxx_abi")
  else
    CB_MPI_CMAKE=(-DMPI_C_COMPILER="$prefix/bin/mpicc" -DMPI_CXX_COMPILER="$prefix/bin/mpicxx")
  fi
  CB_MPI_CMAKE+=(-DMPIEXEC_EXECUTABLE="$prefix/bin/mpirun")
  export CB_MPIRUN_REAL=$prefix/bin/mpirun MPIRUN=$here/mpirun_compat.sh
}

# cb_mpi_build_dir BASE: BASE for the default MPI, BASE-$CB_MPI for another.
cb_mpi_build_dir() {
  case "${CB_MPI:-}" in
    "" | mpich4) echo "$1" ;;
    *) echo "$1-$CB_MPI" ;;
  esac
}
