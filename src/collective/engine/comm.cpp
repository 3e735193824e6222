#include "collective/engine/comm.hpp"

#include "harness/mpi_check.hpp"

namespace cb::engine {

Comm::Comm(MPI_Comm parent, WaitMode wait) : wait_(wait) {
  CB_MPI(MPI_Comm_dup(parent, &comm_));
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  mpi_ = MpiTransport(comm_);

  // Node map: the lowest world rank of each shared-memory group names the node.
  MPI_Comm local;
  CB_MPI(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local));
  int leader = rank_;
  CB_MPI(MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, local));
  MPI_Comm_free(&local);
  std::vector<int> leaders(static_cast<size_t>(size_));
  CB_MPI(MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, comm_));
  std::vector<int> ids(static_cast<size_t>(size_), -1);
  node_of_.resize(static_cast<size_t>(size_));
  int nodes = 0;
  for (int r = 0; r < size_; ++r) {
    int& id = ids[static_cast<size_t>(leaders[static_cast<size_t>(r)])];
    if (id < 0) id = nodes++;
    node_of_[static_cast<size_t>(r)] = id;
  }
  node_count_ = nodes;
}

Comm::~Comm() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

int Comm::next_tag() {
  return kFirstCollTag + static_cast<int>(seq_++ % kCollTagSpan);
}

}  // namespace cb::engine
