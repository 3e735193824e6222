// The arguments every layer passes around: buffers, point-to-point operations, the
// arguments of one collective, a request in flight, and how a rank waits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/types.hpp"

namespace cb {

class CountMatrix;  // core/vcounts.hpp
class Topology;     // core/topology.hpp
struct LayoutSpec;  // core/layout.hpp

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
  bool persistent = false;  // to be made persistent (Backend::init) rather than run once
  std::string algo;         // engine: empty -> tuning table, else forced by name
  // Alltoallv: elements from every rank to every rank (count is then their mean); owned
  // by the caller, identical on every rank.
  const CountMatrix* counts = nullptr;
  // Neighborhood collectives: the virtual topology (-N); owned by the caller, identical on
  // every rank.
  const Topology* topology = nullptr;
  // -D: each block of `count` elements travels as one element of this derived datatype
  // (the MPI backend only); owned by the caller. Null: the plain type.
  const LayoutSpec* layout = nullptr;
  // --vary-data: which generation of the validation inputs the CollSpec's fill and check
  // use (values::varied_index(); 0: the plain inputs). Backends ignore it.
  uint32_t generation = 0;
};

// A non-blocking operation in flight.
class Request {
 public:
  virtual ~Request() = default;
  virtual bool test() = 0;  // drives progress; true once complete
  virtual void wait() = 0;  // completes it, spinning or yielding as the backend was told
};

}  // namespace cb
