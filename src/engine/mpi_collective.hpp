// The MPI library's own collectives, called in one place: by --backend mpi, and by the
// engine's "mpi" algorithm (algos/mpi_library.cpp), through which the tuning table hands a
// size range to the library where it measured the library faster (as MVAPICH2 and Open
// MPI's HAN fall back to their base collectives), and the preload passes such calls
// straight through.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "core/args.hpp"

namespace cb {

class CountMatrix;

// MPI_Alltoallv's counts and displacements (elements) of one rank for one count matrix;
// must stay untouched while an MPI_Ialltoallv may still read them.
struct MpiCountArrays {
  std::vector<int> scounts, sdispls, rcounts, rdispls;
};
// Fills `v` for `rank` of `m` (left as it is when it already holds them).
void fill_count_arrays(const CountMatrix& m, int rank, MpiCountArrays& v);

// Why the MPI library must not be given `args` (a known defect of the library); empty
// when it can run them.
std::string mpi_collective_refuses(const CollArgs& args);

// The collective of `args` on `comm`, started non-blocking / run to completion. `counts`
// holds alltoallv's arrays (filled here). Throws RuntimeError when MPI fails, UsageError for
// a count over MPI's int or a collective MPI does not have.
MPI_Request post_mpi_collective(const CollArgs& args, MPI_Comm comm, int rank,
                                MpiCountArrays& counts);
void run_mpi_collective(const CollArgs& args, MPI_Comm comm, int rank, MpiCountArrays& counts);

int as_mpi_count(size_t n);  // n, or UsageError when it exceeds MPI's int count

}  // namespace cb
