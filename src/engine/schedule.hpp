// A collective as data: rounds of steps (send, receive, reduce, copy), cf. libNBC and
// MPICH's MPIR_Sched. Algorithms only build schedules; execution.hpp runs them.
//
// Within a round, steps start in the order they were added: communication is posted
// without waiting, local work (reduce, copy) runs to completion before the next step
// starts. A round ends when all of its communication has completed. So "post the next
// receive, reduce the previous chunk, send it" is one round in which the reduction
// overlaps the incoming data.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "core/types.hpp"
#include "engine/group.hpp"

namespace cb::engine {

enum class StepKind : uint8_t { Send, Recv, Reduce, Copy, Poll };

// Local work that waits on peers through shared memory: a resumable state machine that
// advance() moves as far as it can without blocking; true once finished.
class Pollable {
 public:
  virtual ~Pollable() = default;
  virtual bool advance() = 0;
  // Shared-memory state is numbered by operation (Schedule::op()): a Pollable that can run
  // again as operation `to` (built as `from`) goes back to its start and says true; false
  // when it cannot (then its schedule must be built again).
  virtual bool renumber(uint64_t /*from*/, uint64_t /*to*/) { return false; }
};

struct Step {
  StepKind kind;
  int peer = -1;              // Send, Recv
  void* dst = nullptr;        // Recv target; Reduce in/out; Copy destination
  const void* src = nullptr;  // Send source; Reduce input; Copy source
  size_t bytes = 0;           // Send, Recv, Copy
  size_t count = 0;           // Reduce: elements
  Pollable* poll = nullptr;   // Poll
  Dtype dtype = Dtype::Char;
  Op op = Op::Sum;
  // Execution state, owned by whoever started the step.
  bool started = false;  // local work (Reduce, Copy) has been handed to the executor
  bool done = false;     // communication completed
  int tag = 0;           // set when posted
  uint64_t token = 0;    // transport-owned state (the MPI transport keeps its request here)
  uint32_t wire = 0;     // transport-owned: how the message travels
  size_t moved = 0;      // transport-owned: bytes moved so far
};

class Schedule {
 public:
  Schedule() = default;
  ~Schedule();
  Schedule(const Schedule&) = delete;
  Schedule& operator=(const Schedule&) = delete;

  // Peers given to send/recv are ranks of `group` from now on (null: communicator ranks).
  void set_group(const Group* group) { group_ = group; }

  // Zero-byte transfers and empty reductions are dropped: both sides drop them alike.
  void send(const void* src, size_t bytes, int peer);
  void recv(void* dst, size_t bytes, int peer);
  void reduce(void* inout, const void* in, size_t count, Dtype dt, Op op);  // inout op= in
  void copy(void* dst, const void* src, size_t bytes);
  void poll(std::unique_ptr<Pollable> work);  // owned by the schedule
  void end_round();                           // closes the current round; no-op when it is empty

  // The operation this schedule carries out: the same number on every rank, so that
  // shared-memory state of concurrent operations stays apart.
  void set_op(uint64_t op) { op_ = op; }
  uint64_t op() const { return op_; }
  // Runs alone (Comm::admit): starts only once every older operation of its communicator
  // has completed here. The small path's (shm/small_slots.hpp), which runs one at a time.
  void set_exclusive() { exclusive_ = true; }
  bool exclusive() const { return exclusive_; }

  // Where the collective's buffers live: scratch memory is taken from the same kind, and
  // execution routes local work and transfers accordingly.
  void set_mem(Mem mem) { mem_ = mem; }
  Mem mem() const { return mem_; }

  // Memory that lives as long as the schedule (or until reset), 64-byte aligned, of the
  // schedule's memory kind.
  std::byte* scratch(size_t bytes);

  void reset();  // empties the schedule, keeping its memory for the next build
  // Makes a schedule that has run ready to run again, unchanged, as operation `op`
  // (persistent collectives: built once, started many times): every step's execution
  // state cleared, every Poll step renumbered. False when some Poll step cannot be.
  bool rearm(uint64_t op);
  size_t rounds() const { return round_ends_.size(); }
  std::span<Step> round(size_t i);
  size_t steps() const { return steps_.size(); }

 private:
  void add(Step s);

  const Group* group_ = nullptr;
  uint64_t op_ = 0;
  bool exclusive_ = false;
  std::vector<std::unique_ptr<Pollable>> polls_;
  std::vector<Step> steps_;
  std::vector<size_t> round_ends_;  // exclusive end index of each closed round
  // Scratch blocks are never moved, so pointers stay valid while the schedule grows;
  // one arena per memory kind, kept across reset().
  struct Arena {
    std::vector<std::pair<std::byte*, size_t>> blocks;
    size_t block = 0, used = 0;
  };
  Mem mem_ = Mem::Host;
  Arena arenas_[2];
};

}  // namespace cb::engine
