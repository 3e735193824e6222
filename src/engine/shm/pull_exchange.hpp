// The shape shared by the node's copy-only collectives (allgather, alltoall, alltoallv):
// publish my buffers; once every local rank has published, copy what I need straight out
// of their inputs; then keep my input alive until every rank has done the same. A
// collective supplies only what it publishes and what it copies.
#pragma once

#include "engine/shm/peer_sync.hpp"
#include "engine/shm/shm_collectives.hpp"

namespace cb::engine {

class PullExchange : public Pollable {
 public:
  bool advance() final {
    for (;;) {
      switch (phase_) {
        case Phase::Publish:
          publish();
          phase_ = Phase::Peers;
          break;
        case Phase::Peers:
          if (!sync_.peers_published()) return false;
          pull();
          sync_.publish(&OpSlot::gathered, 1);
          phase_ = Phase::Finish;
          break;
        case Phase::Finish:  // my input must stay until everyone has read it
          if (!sync_.all_reached(&OpSlot::gathered, 1)) return false;
          phase_ = Phase::Done;
          return true;
        case Phase::Done:
          return true;
      }
    }
  }

 protected:
  PullExchange(NodeShm& shm, uint64_t op) : shm_(shm), sync_(shm, op) {}
  virtual void publish() = 0;  // sync_.publish_buffers(...) of my input (and output)
  virtual void pull() = 0;     // every peer has published: copy what I need from them
  // Back to the start as operation `to` (built as `from`): its slots are op * 4 + phase
  // (shm_collectives.hpp), shifted by the same amount. For a collective that keeps nothing
  // of a run but its buffers, which then says so by overriding renumber() with it.
  void restart(uint64_t from, uint64_t to) {
    sync_.renumber(sync_.op() - from * 4 + to * 4);
    phase_ = Phase::Publish;
  }

  NodeShm& shm_;
  PeerSync sync_;

 private:
  enum class Phase { Publish, Peers, Finish, Done };
  Phase phase_ = Phase::Publish;
};

}  // namespace cb::engine
