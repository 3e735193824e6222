// The engine's MPI transport: the one place of the engine, beside the bootstrap (comm.cpp,
// shm/node_shm.cpp), that speaks MPI.
#pragma once

#include <mpi.h>

#include "engine/transport.hpp"

namespace cb::engine {

// MPI_Isend / MPI_Irecv on the engine's own communicator.
class MpiTransport final : public Transport {
 public:
  explicit MpiTransport(MPI_Comm comm) : comm_(comm) {}
  const char* name() const override { return "mpi"; }
  void post(Step& step, int tag) override;
  bool test(Step& step) override;

 private:
  MPI_Comm comm_;
};

}  // namespace cb::engine
