// Point to point between ranks of one node through NodeShm. A send publishes descriptors
// in the receiver's channel, in order: up to 8 KiB the data goes in the channel's data
// ring with one descriptor and the send completes at once (eager); a larger message from
// shared memory is described in place and the receiver copies it once, straight from the
// sender's buffer (the send completes when it has); a larger message from private memory
// goes either as a train of 32 KiB fragments through the data ring, copied in by the
// sender and out by the receiver at the same time (pipelined), or by cross-memory attach
// (process_vm_readv, one copy) above CB_SHM_CMA_BYTES, whichever this machine does
// faster. A send waits while the receiver's ring has no free descriptor (64 at most in
// flight per channel) or no room for its bytes (CB_SHM_CHANNEL_BYTES). Receives match
// messages by tag in posting order, as MPI does.
#pragma once

#include <deque>
#include <vector>

#include "engine/shm/node_shm.hpp"
#include "engine/transport.hpp"

namespace cb::engine {

class ShmTransport final : public Transport {
 public:
  explicit ShmTransport(NodeShm& shm);
  const char* name() const override { return "shm"; }
  void post(Step& step, int tag) override;
  bool test(Step& step) override;

 private:
  struct Posted {
    Step* step;
    int tag;
  };
  // The sender's view of a channel's data ring: byte positions that only grow (modulo
  // its size in the channel); [tail, head) holds data not yet retired.
  struct Ring {
    uint64_t head = 0, tail = 0;
  };
  void push_sends(int receiver);  // posts queued sends in order while the ring has room
  // One descriptor of s; false when the ring has no descriptor or data room free.
  bool post_next(Channel& ch, Ring& data, Step& s);
  void retire(Channel& ch, Ring& data);
  void match(int sender);  // hands arrived data to posted receives, in order
  bool consume(Channel& ch, Descriptor& d, Step& r);  // copies d into r; true when r is done
  int local(int comm_rank) const { return shm_.local_of(comm_rank); }

  NodeShm& shm_;
  std::vector<std::deque<Step*>> sends_;   // per receiving local rank, not yet fully posted
  std::vector<std::deque<Posted>> recvs_;  // per sending local rank, not yet complete
  std::vector<uint64_t> next_message_;     // per receiving local rank
  std::vector<Ring> data_;                 // per receiving local rank
  size_t cma_bytes_;
  uint64_t polls_ = 0;
};

}  // namespace cb::engine
