// What the alltoall algorithms share: where the input blocks are (a copy of recv when in
// place), the address of block i, and the shifted exchange (pairwise, linear).
#pragma once

#include "engine/algos/common.hpp"

namespace cb::engine {

struct AlltoallBuffers {
  const std::byte* in;
  std::byte* out;
  size_t block;  // bytes per peer

  AlltoallBuffers(Schedule& s, const CollArgs& a, int n) : block(a.count * width(a)) {
    out = static_cast<std::byte*>(a.recv.ptr);
    if (a.in_place) {
      std::byte* copy = s.scratch(block * static_cast<size_t>(n));
      s.copy(copy, out, block * static_cast<size_t>(n));
      in = copy;
    } else {
      in = static_cast<const std::byte*>(a.send.ptr);
    }
  }
  const std::byte* in_block(int i) const { return in + block * static_cast<size_t>(i); }
  std::byte* out_block(int i) const { return out + block * static_cast<size_t>(i); }
};

// Own block copied; then for k = 1..p-1 send to rank + k and receive from rank - k,
// `peers_per_round` exchanges in flight per round (1: pairwise).
inline void shifted_exchange(Schedule& s, const CollArgs& a, const Group& c, int peers_per_round) {
  const int n = c.size(), r = c.rank();
  const AlltoallBuffers b(s, a, n);
  s.copy(b.out_block(r), b.in_block(r), b.block);
  for (int k = 1; k < n; ++k) {
    const int to = (r + k) % n, from = (r - k + n) % n;
    s.recv(b.out_block(from), b.block, from);
    s.send(b.in_block(to), b.block, to);
    if (k % peers_per_round == 0) s.end_round();
  }
  s.end_round();
}

}  // namespace cb::engine
