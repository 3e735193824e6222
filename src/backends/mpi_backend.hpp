// --backend mpi: the MPI library collbench was built with, called the way OMB calls it
// (blocking MPI_Send/MPI_Recv and blocking collectives), or non-blocking + yield-wait
// when the wait mode is Yield. Device buffers go to MPI as they are when the library is
// CUDA-aware; otherwise they are refused unless --staging, which copies them to host
// memory around every call, the way a user would by hand (and is timed as part of it).
#pragma once

#include <mpi.h>

#include <map>
#include <vector>

#include "backends/backend.hpp"
#include "backends/control.hpp"
#include "engine/mpi_collective.hpp"

namespace cb {

class MpiBackend final : public Backend {
 public:
  MpiBackend(const Control& ctl, bool staging);
  ~MpiBackend() override;

  BackendDescription description() const override;

  void send(const Buf& buf, int peer, int tag) override;
  void recv(const Buf& buf, int peer, int tag) override;
  void batch(std::span<const P2POp> ops) override;

  std::string unsupported_memory(Mem mem) const override;
  void run(const CollArgs& args) override;
  std::function<void()> bind(const CollArgs& args) override;
  std::unique_ptr<Request> start(const CollArgs& args) override;
  std::unique_ptr<PersistentColl> init(const CollArgs& args) override;
  void use_topology(const Topology& topology) override;
  void iteration_barrier(const Control& ctl) override;
  std::string reduction_note(Dtype dt, Op op) const override;

 private:
  std::string refuses(const CollArgs& args) const override;
  std::string persistent_refuses(const CollArgs& args) const override;
  MPI_Request post(const CollArgs& args);
  // The communicator `args` run on: the topology's graph communicator for a neighborhood
  // collective, else the backend's duplicate of MPI_COMM_WORLD.
  MPI_Comm comm_for(const CollArgs& args) const;
  void run_host(const CollArgs& args);
  // --staging copies through host memory even where the library is CUDA-aware (to compare)
  bool staged(Mem mem) const { return mem == Mem::Cuda && (staging_ || !cuda_aware_); }

  MPI_Comm comm_ = MPI_COMM_NULL;
  WaitMode wait_;
  std::vector<MPI_Request> reqs_;  // reused by batch()
  bool cuda_aware_ = false;
  bool staging_ = false;
  std::vector<std::vector<std::byte>> stage_;  // host copies of device buffers, reused
  // MPI_Alltoallv's arrays per count matrix, untouched while an operation may read them
  std::map<const CountMatrix*, MpiCountArrays> varrays_;
  MpiCountArrays no_counts_;
  std::map<const Topology*, MPI_Comm> graphs_;  // use_topology()'s communicators
};

}  // namespace cb
