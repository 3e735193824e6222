// The MPI library's own collective, as one engine algorithm ("mpi") for every collective:
// the schedule is one local step that posts the library's non-blocking collective on the
// engine's communicator when it is built (in program order on every rank, as MPI requires
// of non-blocking collectives) and tests it when polled. The tuning table names it for the
// sizes where the library was measured faster than every engine algorithm, as MVAPICH2's
// tables and Open MPI's HAN fall back to the base collectives; the preload then passes
// such calls straight through (no engine in between).
#include "core/mpi_check.hpp"
#include "engine/algos/algos.hpp"
#include "engine/comm.hpp"
#include "engine/mpi_collective.hpp"
#include "engine/mpi_library_info.hpp"

namespace cb::engine {
namespace {

class LibraryCall final : public Pollable {
 public:
  LibraryCall(const CollArgs& a, MPI_Comm comm, int rank)
      : req_(post_mpi_collective(a, comm, rank, counts_)) {}
  ~LibraryCall() override {
    if (req_ != MPI_REQUEST_NULL) MPI_Wait(&req_, MPI_STATUS_IGNORE);
  }
  bool advance() override {
    int done = 0;
    CB_MPI(MPI_Test(&req_, &done, MPI_STATUS_IGNORE));
    return done != 0;
  }

 private:
  MpiCountArrays counts_;  // alltoallv: read by MPI until the request completes (first:
                           // constructed before req_'s initializer fills it)
  MPI_Request req_;
};

// The communicator the library's collective runs on: the engine's, or for a neighborhood
// collective the distributed-graph communicator of its topology (Comm::use_topology).
MPI_Comm library_comm(const CollArgs& a, const Group& g) {
  return a.topology ? g.comm()->graph(*a.topology) : g.comm()->mpi();
}

std::string cannot_run(const CollArgs& a, const Group& g) {
  if (!g.comm())
    return "mpi: the MPI library's collective runs on the whole communicator, not on a "
           "subgroup of it";
  if (a.topology && library_comm(a, g) == MPI_COMM_NULL)
    return "mpi: no graph communicator of this topology (the backend's use_topology() makes "
           "it before the first neighborhood collective)";
  if (a.recv.mem != Mem::Host && !mpi_is_cuda_aware())
    return "mpi: this MPI library is not CUDA-aware";
  return mpi_collective_refuses(a);
}

void build(Schedule& s, const CollArgs& a, const Group& g) {
  s.poll(std::make_unique<LibraryCall>(a, library_comm(a, g), g.rank()));
  s.end_round();
}

// A blocking call needs no progress from the engine: every rank makes the same call in
// program order, and MPI completes it whatever engine operations are still in flight.
void run_blocking(const CollArgs& a, const Group& g) {
  MpiCountArrays counts;
  run_mpi_collective(a, library_comm(a, g), g.rank(), counts);
}

constexpr std::string_view kSummary =
    "the MPI library's own collective (MPI_I<coll>), where it is faster than the engine's";

}  // namespace

#define CB_MPI_LIBRARY_ALGORITHM(variable, collective) \
  const Algorithm variable{                            \
      .coll = collective,                              \
      .name = "mpi",                                   \
      .summary = kSummary,                             \
      .cannot_run = cannot_run,                        \
      .build = build,                                  \
      .run_blocking = run_blocking,                    \
  };
CB_MPI_LIBRARY_ALGORITHM(kAllreduceMpi, Coll::Allreduce)
CB_MPI_LIBRARY_ALGORITHM(kBcastMpi, Coll::Bcast)
CB_MPI_LIBRARY_ALGORITHM(kAlltoallMpi, Coll::Alltoall)
CB_MPI_LIBRARY_ALGORITHM(kAllgatherMpi, Coll::Allgather)
CB_MPI_LIBRARY_ALGORITHM(kReduceScatterMpi, Coll::ReduceScatter)
CB_MPI_LIBRARY_ALGORITHM(kReduceMpi, Coll::Reduce)
CB_MPI_LIBRARY_ALGORITHM(kBarrierMpi, Coll::Barrier)
CB_MPI_LIBRARY_ALGORITHM(kAlltoallvMpi, Coll::Alltoallv)
CB_MPI_LIBRARY_ALGORITHM(kGatherMpi, Coll::Gather)
CB_MPI_LIBRARY_ALGORITHM(kGathervMpi, Coll::Gatherv)
CB_MPI_LIBRARY_ALGORITHM(kScatterMpi, Coll::Scatter)
CB_MPI_LIBRARY_ALGORITHM(kScattervMpi, Coll::Scatterv)
CB_MPI_LIBRARY_ALGORITHM(kAllgathervMpi, Coll::Allgatherv)
CB_MPI_LIBRARY_ALGORITHM(kNeighborAllgatherMpi, Coll::NeighborAllgather)
CB_MPI_LIBRARY_ALGORITHM(kNeighborAllgathervMpi, Coll::NeighborAllgatherv)
CB_MPI_LIBRARY_ALGORITHM(kNeighborAlltoallMpi, Coll::NeighborAlltoall)
CB_MPI_LIBRARY_ALGORITHM(kNeighborAlltoallvMpi, Coll::NeighborAlltoallv)
CB_MPI_LIBRARY_ALGORITHM(kNeighborAlltoallwMpi, Coll::NeighborAlltoallw)
#undef CB_MPI_LIBRARY_ALGORITHM

}  // namespace cb::engine
