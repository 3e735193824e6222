// What the alltoall algorithms share: where the input blocks are (a copy of recv when in
// place) and the address of block i.
#pragma once

#include "collective/engine/algos/common.hpp"

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

}  // namespace cb::engine
