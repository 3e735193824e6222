// The small-message path: collectives up to kSmallSlotBytes per rank among the
// ranks of a communicator that lies entirely on one node, with no schedule, no allocation
// and no system call on the way. Each rank's area (NodeShm::small_area, made with the
// segment when the communicator is set up) holds one cache line with its arrival counter
// and two inline data buffers. An operation is: copy my contribution into my buffer,
// publish my arrival, wait for the arrivals I need, read the peers' buffers.
//
// Sequence numbers. Every small operation of a communicator takes the next number
// (SmallSlots::next) in call order, which MPI makes the same on every rank; the counter of
// a rank holds the number of the last operation it arrived at and only grows (64 bits:
// 584 years at one operation per nanosecond; compared as a signed difference all the
// same, so even a wrap would not reorder it). Nothing is ever reset.
//
// Why two buffers, and when one may be overwritten. Operation s uses buffer s % 2. A rank
// runs its small operations one at a time, in order (the window rule below), so a peer
// that has arrived at s - 1 has finished every read of operation s - 2, the last user of
// buffer s % 2. A rank therefore writes its buffer for s only once every peer has arrived
// at s - 1. In the symmetric collectives (allreduce, allgather, alltoall(v), reduce_scatter,
// barrier) it saw all of them arrive at s - 1 in the previous operation already and does
// not look again; after a rooted one (bcast, reduce), where not every rank waits for every
// other, it checks their counters. A root can thus run at most one operation ahead of a
// slow reader.
//
// Memory order. A writer fills its buffer with plain stores, then stores its counter with
// release; a reader loads the counter with acquire and, once it is at s, reads the buffer:
// the data happens-before the read. A reader's last load of a buffer precedes, in its own
// order, the release store of its next arrival; the writer's acquire load of that arrival
// precedes its overwrite: no read overlaps a write.
//
// Pending operations (the window, engine::Comm::admit): a small operation runs alone. As
// a schedule (non-blocking, or blocking while others are pending) it starts only once
// every older operation of its communicator has completed on this rank, and no newer one
// starts on the small path before it completes; a blocking call with nothing pending runs
// it on the spot (start_small in engine/algorithm.hpp). The choice of the small algorithm
// depends only on arguments equal on every rank, so every rank takes the same numbers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/types.hpp"
#include "core/vcounts.hpp"
#include "engine/shm/node_shm.hpp"

namespace cb::engine {

class SmallSlots;

enum class SmallKind : uint8_t {
  Allreduce,
  Reduce,
  Bcast,
  Allgather,
  Alltoall,
  Alltoallv,
  ReduceScatter,
  Barrier
};

// One small operation: plain data, on the caller's stack (a blocking call) or inside a
// schedule's Poll step. `bytes` is what a writing rank copies into its buffer: allreduce,
// reduce: the vector; bcast: the message (the root writes); allgather: the block;
// alltoall, reduce_scatter: every peer's block (size x block); alltoallv: its send buffer,
// whose blocks lie packed in rank order (counts).
struct SmallOp {
  SmallSlots* slots = nullptr;
  SmallKind kind = SmallKind::Barrier;
  uint64_t seq = 0;               // SmallSlots::next()
  const std::byte* in = nullptr;  // this rank's contribution (or the root's message)
  std::byte* out = nullptr;
  size_t bytes = 0;
  size_t count = 0;  // reductions: elements of the result
  Dtype dt = Dtype::Char;
  Op op = Op::Sum;
  int root = 0;  // bcast and reduce; a local rank, which is the communicator rank here
  const CountMatrix* counts = nullptr;  // alltoallv (ranks: communicator ranks)
  uint8_t phase = 0;
  uint64_t polls = 0;  // unsuccessful polls, for NodeShm::check_peers
  // Moves the operation as far as it can without waiting; true once it has completed.
  // Throws PeerLost when a peer it waits for has exited.
  bool advance();
};

class SmallSlots {
 public:
  explicit SmallSlots(NodeShm& shm) : shm_(shm) {}
  SmallSlots(const SmallSlots&) = delete;
  SmallSlots& operator=(const SmallSlots&) = delete;

  int rank() const { return shm_.local_rank(); }
  int size() const { return shm_.local_size(); }
  // The number of the next operation, taken when it is started or built (call order).
  uint64_t next() { return ++seq_; }
  bool advance(SmallOp& op);

 private:
  std::byte* buffer(int local, uint64_t seq) const;
  uint64_t& arrived(int local) const;
  bool arrived_at(int local, uint64_t seq, uint64_t& polls);  // polls on failure
  bool all_arrived_at(uint64_t seq, uint64_t& polls);
  void finish(const SmallOp& op);

  NodeShm& shm_;
  uint64_t seq_ = 0;
  // Every peer is known to have arrived at this operation (so to have finished reading
  // every earlier one): local state, touched only by the one small operation running.
  uint64_t all_seen_ = 0;
};

}  // namespace cb::engine
