// The MPI library's own collectives, called in one place: by --backend mpi, and by the
// engine's "mpi" algorithm (algos/mpi_passthrough.cpp), through which the tuning table hands a
// size range to the library where it measured the library faster (as MVAPICH2 and Open
// MPI's HAN fall back to their base collectives), and the preload passes such calls
// straight through.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/args.hpp"

namespace cb {

class CountMatrix;
class Topology;

// The count and displacement arrays (elements; MPI_Alltoallw: bytes, and its datatypes) of
// one rank for one count matrix and collective; must stay untouched while an MPI
// operation may still read them (a persistent one: until it is freed).
struct MpiCountArrays {
  std::vector<int> scounts, sdispls, rcounts, rdispls;
  std::vector<MPI_Datatype> types, stypes;           // stypes: neighbor_alltoallw's
  std::vector<MPI_Aint> sdispls_aint, rdispls_aint;  // neighbor_alltoallw's displacements
  // What they were filled for.
  const CountMatrix* matrix = nullptr;
  const Topology* topology = nullptr;
  Coll coll = Coll::None;
  int rank = -1;
  Dtype dtype = Dtype::Char;

  bool holds(const CollArgs& args, int rank) const;                // filled for these already
  static MpiCountArrays for_args(const CollArgs& args, int rank);  // empty, marked for them
};
// Fills `v` for `rank` from args.counts (left as it is when it already holds them):
// alltoallv/w a row and a column of the matrix, the v forms of one block per rank its
// blocks (CountMatrix::block).
void fill_count_arrays(const CollArgs& args, int rank, MpiCountArrays& v);
// The neighborhood collectives' arrays on args.topology (blocks in neighbor order).
void fill_neighbor_arrays(const CollArgs& args, int rank, MpiCountArrays& v);

// Why the MPI library must not be given `args` (a known defect of the library); empty
// when it can run them.
std::string mpi_collective_refuses(const CollArgs& args);

// Why the library's persistent form of args.coll must not be benchmarked (a known defect
// of the library); empty: it may.
std::string mpi_persistent_refuses(const CollArgs& args);

// How a collective is called: run to completion (MPI_<Coll>), started (MPI_I<coll>), or
// made persistent (MPI_<Coll>_init: the request is then MPI_Start-ed and waited for each
// time, and freed with MPI_Request_free).
// Bound: the blocking call with every argument resolved once (bind_mpi_collective()).
enum class MpiForm : uint8_t { Blocking, Nonblocking, Persistent, Bound };

// The collective of `args` on `comm` in `form`; the request (MPI_REQUEST_NULL when
// blocking). `counts` holds the count arrays of the v forms (filled here). Throws
// RuntimeError when MPI fails, UsageError for a count over MPI's int or a collective MPI
// does not have.
MPI_Request call_mpi_collective(MpiForm form, const CollArgs& args, MPI_Comm comm, int rank,
                                MpiCountArrays& counts);
// The blocking call of `args`, its datatype, operator, counts and buffers resolved now: a
// timed loop calls it each iteration instead of run_mpi_collective(), which resolves them
// on every call (about 100 instructions more per call than OMB's loop, measured with
// scripts/omb_fidelity.sh --callgrind). It holds copies of the count arrays it needs.
std::function<void()> bind_mpi_collective(const CollArgs& args, MPI_Comm comm, int rank,
                                          MpiCountArrays& counts);
inline MPI_Request post_mpi_collective(const CollArgs& args, MPI_Comm comm, int rank,
                                       MpiCountArrays& counts) {
  return call_mpi_collective(MpiForm::Nonblocking, args, comm, rank, counts);
}
inline void run_mpi_collective(const CollArgs& args, MPI_Comm comm, int rank,
                               MpiCountArrays& counts) {
  call_mpi_collective(MpiForm::Blocking, args, comm, rank, counts);
}

[[noreturn]] void refuse_mpi_count(size_t n);  // UsageError: n exceeds MPI's int count
// n as MPI's int count (inline: point-to-point benchmarks call it twice an iteration).
inline int as_mpi_count(size_t n) {
  if (n > static_cast<size_t>(INT32_MAX)) refuse_mpi_count(n);
  return static_cast<int>(n);
}

// The distributed-graph communicator of `topology` over `parent` (collective over parent;
// `rank` is this rank in it), on which the library's neighborhood collectives run: the
// lists' order is MPI's neighbor order, and no reordering, so ranks stay the topology's.
// Errors return (MPI_ERRORS_RETURN), as on parent. The caller frees it.
MPI_Comm make_graph_comm(MPI_Comm parent, const Topology& topology, int rank);

}  // namespace cb
