// --backend mpi: the MPI library collbench was built with, called the way OMB calls it
// (blocking MPI_Send/MPI_Recv and blocking collectives), or non-blocking + yield-wait
// when the wait mode is Yield.
#pragma once

#include <mpi.h>

#include <vector>

#include "harness/backend.hpp"
#include "harness/control.hpp"

namespace cb {

class MpiBackend final : public Backend {
 public:
  explicit MpiBackend(const Control& ctl);
  ~MpiBackend() override;

  std::string name() const override { return "mpi"; }
  std::string title() const override { return "MPI"; }
  std::string library_version() const override;
  void describe(nlohmann::json& out) const override;
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void send(const Buf& buf, int peer, int tag) override;
  void recv(const Buf& buf, int peer, int tag) override;
  void batch(std::span<const P2POp> ops) override;

  std::string unsupported(const CollArgs& args) const override;
  void run(const CollArgs& args) override;
  std::unique_ptr<Request> start(const CollArgs& args) override;

 private:
  MPI_Request post(const CollArgs& args);

  MPI_Comm comm_ = MPI_COMM_NULL;
  WaitMode wait_;
  int rank_ = 0, size_ = 1;
  std::vector<MPI_Request> reqs_;  // reused by batch()
};

// MPI's datatype for collbench's dtype; MPI_DATATYPE_NULL where MPI has none.
MPI_Datatype mpi_datatype(Dtype dt);

}  // namespace cb
