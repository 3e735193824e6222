// Alltoall by Bruck's algorithm: log2(p) rounds instead of p-1. Blocks are first rotated so
// that block i is bound for rank + i; in round k every block whose index has bit k set
// moves to rank + 2^k (packed into one message); a final rotation puts block i, which came
// from rank - i, in place. Each block travels up to log2(p) times: for small messages.
#include "engine/algos/algos.hpp"
#include "engine/algos/alltoall_common.hpp"

namespace cb::engine {
namespace {

void build(Schedule& s, const CollArgs& a, const Group& c) {
  const int n = c.size(), r = c.rank();
  const AlltoallBuffers b(s, a, n);
  const size_t all = b.block * static_cast<size_t>(n);
  std::byte* work = s.scratch(all);
  std::byte* pack = s.scratch(all);
  std::byte* unpack = s.scratch(all);
  const auto at = [&](std::byte* base, int i) { return base + b.block * static_cast<size_t>(i); };

  for (int i = 0; i < n; ++i) s.copy(at(work, i), b.in_block((r + i) % n), b.block);
  for (int k = 1; k < n; k <<= 1) {
    int packed = 0;
    for (int i = 1; i < n; ++i)
      if (i & k) s.copy(at(pack, packed++), at(work, i), b.block);
    const size_t bytes = b.block * static_cast<size_t>(packed);
    s.recv(unpack, bytes, (r - k + n) % n);
    s.send(pack, bytes, (r + k) % n);
    s.end_round();
    packed = 0;  // unpacking runs first in the next round, before the next packing
    for (int i = 1; i < n; ++i)
      if (i & k) s.copy(at(work, i), at(unpack, packed++), b.block);
  }
  for (int i = 0; i < n; ++i) s.copy(b.out_block((r - i + n) % n), at(work, i), b.block);
  s.end_round();
}

}  // namespace

const Algorithm kAlltoallBruck{
    .coll = Coll::Alltoall,
    .name = "bruck",
    .summary = "log2(p) rounds of packed blocks (Bruck); for small messages",
    .cannot_run = nullptr,
    .build = build,
};

}  // namespace cb::engine
