// Point to point between ranks of one node through NodeShm. A send publishes a descriptor
// in the receiver's channel: small messages are copied into the descriptor's eager slot
// (the send completes at once); larger ones are described in place, and the receiver
// copies them once, straight from the sender's buffer (memcpy when it lies in shared
// memory, process_vm_readv otherwise); such a send completes when the receiver has
// copied. Receives match descriptors by tag in posting order, as MPI does.
#pragma once

#include <deque>
#include <vector>

#include "collective/engine/shm/node_shm.hpp"
#include "collective/engine/transport.hpp"

namespace cb::engine {

class ShmTransport final : public Transport {
 public:
  explicit ShmTransport(NodeShm& shm);
  const char* name() const override { return "shm"; }
  void post(Step& step, int tag) override;
  bool test(Step& step) override;

 private:
  struct PostedRecv {
    Step* step;
    int tag;
  };
  bool try_send(Step& s);  // publishes the descriptor if the ring has room
  void retire(Channel& ch);
  void match(int sender);  // hands arrived messages to posted receives, in order
  int local(int comm_rank) const;

  NodeShm& shm_;
  std::vector<std::deque<PostedRecv>> posted_;  // per sending local rank
  uint64_t polls_ = 0;
};

}  // namespace cb::engine
