// Waiting on the other local ranks through their operation slots, without blocking.
#pragma once

#include "core/errors.hpp"
#include "engine/shm/node_shm.hpp"

namespace cb::engine {

class PeerSync {
 public:
  PeerSync(NodeShm& shm, uint64_t op) : shm_(shm), op_(op) {}

  uint64_t op() const { return op_; }
  void renumber(uint64_t op) { op_ = op; }
  int me() const { return shm_.local_rank(); }
  int size() const { return shm_.local_size(); }
  OpSlot& slot(int local) { return shm_.slot(local, op_); }
  OpSlot& mine() { return slot(me()); }

  void publish(Counter OpSlot::*which, uint64_t count) {
    (mine().*which).value.store(progress(op_, count), std::memory_order_release);
  }
  // True once `local`'s counter reached `count` for this operation.
  bool reached(int local, Counter OpSlot::*which, uint64_t count) {
    if ((slot(local).*which).value.load(std::memory_order_acquire) >= progress(op_, count))
      return true;
    shm_.check_peers(polls_);
    return false;
  }
  bool all_reached(Counter OpSlot::*which, uint64_t count) {
    for (int r = 0; r < size(); ++r)
      if (!reached(r, which, count)) return false;
    return true;
  }
  // The buffers every local rank published for this operation; false while some have not.
  bool peers_published() {
    for (int r = 0; r < size(); ++r)
      if (!reached_published(r)) return false;
    return true;
  }
  // True once `local` published its buffers for this operation.
  bool reached_published(int local) {
    const uint64_t v = slot(local).published.value.load(std::memory_order_acquire);
    // A peer publishes operation op + kOpWindow only after completing op, which needs this
    // rank (Comm::admit): seeing it here means the window was bypassed.
    if (v > op_)
      throw RuntimeError("internal error: a local peer reused operation slot " +
                         std::to_string(op_ % kOpSlots) + " while this rank still ran its op " +
                         std::to_string(op_));
    if (v == op_) return true;
    shm_.check_peers(polls_);
    return false;
  }
  void publish_buffers(const BufferRef& in, const BufferRef& out) {
    mine().in = in;
    mine().out = out;
    mine().published.value.store(op_, std::memory_order_release);
  }

 private:
  NodeShm& shm_;
  uint64_t op_;
  uint64_t polls_ = 0;
};

}  // namespace cb::engine
