// Allgather by Bruck's algorithm: ceil(log2(p)) rounds for any rank count. A working
// buffer starts with this rank's block; in the round of distance d every rank sends its
// first min(d, p-d) blocks to rank - d and appends those of rank + d, so that block i of
// the buffer is rank r+i's; a final rotation puts every block in place. For small
// messages, where the round count matters more than the extra copies.
#include <algorithm>

#include "engine/algos/algos.hpp"
#include "engine/algos/allgather_common.hpp"

namespace cb::engine {
namespace {

void build(Schedule& s, const CollArgs& a, const Group& c) {
  const int n = c.size(), r = c.rank();
  const size_t block = a.count * width(a);
  auto* out = static_cast<std::byte*>(a.recv.ptr);
  const void* mine = a.in_place ? out + block * static_cast<size_t>(r) : a.send.ptr;
  if (n == 1) {
    s.copy(out, mine, block);
    return s.end_round();
  }
  std::byte* work = s.scratch(block * static_cast<size_t>(n));
  const auto at = [&](std::byte* base, int i) { return base + block * static_cast<size_t>(i); };
  s.copy(work, mine, block);
  for (int d = 1; d < n; d *= 2) {
    const int blocks = std::min(d, n - d);
    s.recv(at(work, d), block * static_cast<size_t>(blocks), (r + d) % n);
    s.send(work, block * static_cast<size_t>(blocks), (r - d + n) % n);
    s.end_round();
  }
  // work[i] is rank (r + i) % n's block: two contiguous copies put them in place.
  const int tail = n - r;  // work[0 .. tail) -> out[r .. n)
  s.copy(at(out, r), work, block * static_cast<size_t>(tail));
  s.copy(out, at(work, tail), block * static_cast<size_t>(r));
  s.end_round();
}

}  // namespace

const Algorithm kAllgatherBruck{
    .coll = Coll::Allgather,
    .name = "bruck",
    .summary = "ceil(log2(p)) rounds for any p, then a rotation (Bruck); small messages",
    .cannot_run = nullptr,
    .build = build,
};

}  // namespace cb::engine
