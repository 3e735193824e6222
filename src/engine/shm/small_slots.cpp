#include "engine/shm/small_slots.hpp"

#include <atomic>
#include <cstring>
#include <vector>

#include "engine/shm/rank_order.hpp"

namespace cb::engine {
namespace {

// A rank's area: the counter alone on the first cache line (peers poll it while the owner
// fills a buffer), then the two buffers.
struct SmallArea {
  alignas(64) uint64_t arrived;  // accessed through std::atomic_ref only
  alignas(64) std::byte buffers[2][kSmallSlotBytes];
};
static_assert(sizeof(SmallArea) == kSmallAreaBytes);
static_assert(std::atomic_ref<uint64_t>::is_always_lock_free);  // address free across processes

// a >= b for sequence numbers, robust to a wrap of the counter.
bool at_or_after(uint64_t a, uint64_t b) {
  return static_cast<int64_t>(a - b) >= 0;
}

SmallArea& area(const NodeShm& shm, int local) {
  return *reinterpret_cast<SmallArea*>(shm.small_area(local));
}

// Whether this rank copies its contribution into its buffer in `op`.
bool writes(const SmallOp& op, int me) {
  switch (op.kind) {
    case SmallKind::Reduce:
      return me != op.root;
    case SmallKind::Bcast:
      return me == op.root;
    case SmallKind::Barrier:
      return false;
    default:
      return true;
  }
}

}  // namespace

bool SmallOp::advance() {
  return slots->advance(*this);
}

std::byte* SmallSlots::buffer(int local, uint64_t seq) const {
  return area(shm_, local).buffers[seq % 2];
}

uint64_t& SmallSlots::arrived(int local) const {
  return area(shm_, local).arrived;
}

bool SmallSlots::arrived_at(int local, uint64_t seq, uint64_t& polls) {
  if (at_or_after(std::atomic_ref(arrived(local)).load(std::memory_order_acquire), seq))
    return true;
  shm_.check_peers(polls);  // throws PeerLost when a local rank has exited
  return false;
}

bool SmallSlots::all_arrived_at(uint64_t seq, uint64_t& polls) {
  if (at_or_after(all_seen_, seq)) return true;
  for (int r = 0; r < size(); ++r)
    if (r != rank() && !arrived_at(r, seq, polls)) return false;
  all_seen_ = seq;
  return true;
}

bool SmallSlots::advance(SmallOp& op) {
  const int me = rank();
  if (op.phase == 0) {
    if (writes(op, me)) {
      // Buffer seq % 2 was last read in operation seq - 2: every peer must be past it.
      if (op.seq > 1 && !all_arrived_at(op.seq - 1, op.polls)) return false;
      if (op.bytes) std::memcpy(buffer(me, op.seq), op.in, op.bytes);
    }
    // Release: the buffer's contents (and every read this rank made of peers' buffers in
    // earlier operations) before the arrival peers act on.
    std::atomic_ref(arrived(me)).store(op.seq, std::memory_order_release);
    op.phase = 1;
  }
  switch (op.kind) {
    case SmallKind::Reduce:
      if (me == op.root && !all_arrived_at(op.seq, op.polls)) return false;
      break;
    case SmallKind::Bcast:
      if (me != op.root && !arrived_at(op.root, op.seq, op.polls)) return false;
      break;
    default:
      if (!all_arrived_at(op.seq, op.polls)) return false;
  }
  finish(op);
  return true;
}

// The peers' buffers for op.seq are complete (acquired): read them.
void SmallSlots::finish(const SmallOp& op) {
  const int me = rank(), n = size();
  const uint64_t s = op.seq;
  std::vector<std::byte> unused;  // reduce_in_rank_order's save: never filled here (own != out)
  switch (op.kind) {
    case SmallKind::Allreduce:
      reduce_in_rank_order(op.out, buffer(me, s), me, n, op.count, op.dt, op.op, unused,
                           [&](int r, int) -> const std::byte* { return buffer(r, s); });
      break;
    case SmallKind::ReduceScatter: {
      const size_t block = op.count * dtype_size(op.dt), at = block * static_cast<size_t>(me);
      reduce_in_rank_order(op.out, buffer(me, s) + at, me, n, op.count, op.dt, op.op, unused,
                           [&](int r, int) -> const std::byte* { return buffer(r, s) + at; });
      break;
    }
    case SmallKind::Reduce: {
      if (me != op.root) break;
      const std::byte* own = op.in;
      if (own == op.out && op.bytes) {
        // In place: stage the root's input in its own buffer (every peer has arrived at s,
        // so none still reads it) rather than save it on the heap.
        std::memcpy(buffer(me, s), own, op.bytes);
        own = buffer(me, s);
      }
      reduce_in_rank_order(op.out, own, me, n, op.count, op.dt, op.op, unused,
                           [&](int r, int) -> const std::byte* { return buffer(r, s); });
      break;
    }
    case SmallKind::Bcast:
      if (me != op.root && op.bytes) std::memcpy(op.out, buffer(op.root, s), op.bytes);
      break;
    case SmallKind::Allgather:
      for (int r = 0; r < n; ++r) {
        std::byte* dst = op.out + op.bytes * static_cast<size_t>(r);
        if (op.bytes && dst != op.in) std::memcpy(dst, buffer(r, s), op.bytes);
      }
      break;
    case SmallKind::Alltoall: {
      const size_t block = op.bytes / static_cast<size_t>(n), at = block * static_cast<size_t>(me);
      for (int r = 0; r < n && block; ++r)
        std::memcpy(op.out + block * static_cast<size_t>(r), buffer(r, s) + at, block);
      break;
    }
    case SmallKind::Alltoallv: {
      const CountMatrix& m = *op.counts;
      const size_t w = dtype_size(op.dt);
      for (int r = 0; r < n; ++r)
        if (const size_t bytes = m.count(r, me) * w)
          std::memcpy(op.out + m.recv_offset(me, r) * w, buffer(r, s) + m.send_offset(r, me) * w,
                      bytes);
      break;
    }
    case SmallKind::Barrier:
      break;
  }
}

}  // namespace cb::engine
