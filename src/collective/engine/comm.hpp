// The engine's communicator, bootstrapped from MPI: rank, size, which ranks share a node,
// the transport to each peer, and a tag per operation so that several collectives can be
// in flight at once without their messages matching each other.
#pragma once

#include <mpi.h>

#include <memory>
#include <vector>

#include "collective/engine/transport.hpp"
#include "harness/backend.hpp"

namespace cb::engine {

class Comm {
 public:
  Comm(MPI_Comm parent, WaitMode wait);  // collective over parent
  ~Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int node_of(int rank) const { return node_of_[static_cast<size_t>(rank)]; }
  int node_count() const { return node_count_; }
  MPI_Comm mpi() const { return comm_; }
  WaitMode wait_mode() const { return wait_; }

  Transport& transport(int /*peer*/) { return mpi_; }
  // Tags for collectives: one per operation, taken in the same order on every rank.
  int next_tag();

  static constexpr int kFirstCollTag = 1024;  // below: point-to-point benchmark tags
  static constexpr int kCollTagSpan = 16384;

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1, node_count_ = 1;
  std::vector<int> node_of_;
  WaitMode wait_;
  MpiTransport mpi_{MPI_COMM_NULL};
  unsigned seq_ = 0;
};

}  // namespace cb::engine
