// The one interface every backend (mpi, nccl, engine) implements, and the argument
// structs the harness passes through it.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/types.hpp"

namespace cb {

// A buffer the benchmark owns: where it lives decides how it is filled, checked and moved.
struct Buf {
  void* ptr = nullptr;
  size_t bytes = 0;
  Mem mem = Mem::Host;

  std::byte* bytes_at(size_t offset) const { return static_cast<std::byte*>(ptr) + offset; }
  Buf slice(size_t offset, size_t length) const { return {bytes_at(offset), length, mem}; }
};

// How a rank waits for communication to complete. Spin is lowest latency; Yield calls
// sched_yield() between polls so that more ranks than cores still make progress.
enum class WaitMode : uint8_t { Spin, Yield };

struct P2POp {
  enum class Kind : uint8_t { Send, Recv };
  Kind kind;
  Buf buf;
  int peer;
  int tag;
};

// One struct for every collective (cf. ucc_coll_args_t).
struct CollArgs {
  Coll coll = Coll::None;
  Buf send;          // ignored when in_place
  Buf recv;          // result; in place: also the input
  size_t count = 0;  // elements per rank (alltoall: per peer)
  Dtype dtype = Dtype::Char;
  Op op = Op::Sum;
  int root = 0;
  bool in_place = false;
  std::string algo;  // engine: empty -> tuning table, else forced by name
};

// A non-blocking operation in flight.
class Request {
 public:
  virtual ~Request() = default;
  virtual bool test() = 0;  // drives progress; true once complete
  virtual void wait() = 0;  // completes it, spinning or yielding as the backend was told
};

class Backend {
 public:
  virtual ~Backend() = default;
  Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  virtual std::string name() const = 0;   // "mpi", "nccl", "engine"
  virtual std::string title() const = 0;  // "MPI", "NCCL", "Engine" (table header)
  virtual std::string library_version() const = 0;
  virtual void describe(nlohmann::json& out) const;  // extra facts for the JSON document
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Buffers come from the backend (NCCL may use ncclMemAlloc, the engine shared memory).
  // Returned memory is pre-touched: first touch is far slower than steady state.
  virtual Buf alloc(size_t bytes, Mem mem);
  virtual void free(Buf& buf);

  // Point to point. batch() posts every op, then completes them all (OMB's window + Waitall).
  virtual void send(const Buf& buf, int peer, int tag) = 0;
  virtual void recv(const Buf& buf, int peer, int tag) = 0;
  virtual void batch(std::span<const P2POp> ops) = 0;

  // Why point-to-point buffers of this memory kind cannot be used (empty: they can).
  virtual std::string unsupported_memory(Mem) const { return {}; }

  // Collectives. unsupported() says why this backend cannot run `args` (empty: it can).
  virtual std::string unsupported(const CollArgs& args) const = 0;
  virtual void run(const CollArgs& args) = 0;
  virtual std::unique_ptr<Request> start(const CollArgs& args) = 0;
  // The algorithm that runs `args` (recorded in every result), and every algorithm the
  // backend has for a collective (--algo all); empty where the library decides itself.
  virtual std::string algorithm(const CollArgs&) const { return {}; }
  virtual std::vector<std::string> algorithms(Coll) const { return {}; }
  virtual void sync() {}  // device backends: wait for queued work
  // The time limit expired: release whatever could hang the exit (NCCL: ncclCommAbort).
  // Called from the watchdog thread just before the process ends, so it must be safe
  // while the main thread is inside the backend.
  virtual void abort() {}
};

}  // namespace cb
