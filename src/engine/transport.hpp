// How bytes move between two ranks. Algorithms never see a transport: the execution of a
// schedule hands each send/receive step to the transport the communicator has for that
// peer (MPI point to point, shared memory on a node, pinned staging for device buffers).
#pragma once

#include "engine/schedule.hpp"

namespace cb::engine {

class Transport {
 public:
  virtual ~Transport() = default;
  virtual const char* name() const = 0;
  // Starts a Send or Recv step; `tag` keeps concurrent operations apart.
  virtual void post(Step& step, int tag) = 0;
  // True once the step has completed (its buffer may be reused).
  virtual bool test(Step& step) = 0;
};

}  // namespace cb::engine
