// Barrier among the ranks of a node: every rank raises its counter in its operation slot,
// then waits until every other rank's has reached the same operation.
#include "engine/shm/peer_sync.hpp"
#include "engine/shm/shm_collectives.hpp"

namespace cb::engine {
namespace {

// Every rank raises its counter, then waits for all the others'.
class ShmBarrier final : public Pollable {
 public:
  ShmBarrier(NodeShm& shm, uint64_t op) : sync_(shm, op) {}
  bool advance() override {
    if (!arrived_) {
      sync_.publish(&OpSlot::done, 1);
      arrived_ = true;
    }
    return sync_.all_reached(&OpSlot::done, 1);
  }

 private:
  PeerSync sync_;
  bool arrived_ = false;
};

}  // namespace

std::unique_ptr<Pollable> shm_barrier(NodeShm& shm, uint64_t op) {
  return std::make_unique<ShmBarrier>(shm, op);
}

}  // namespace cb::engine
