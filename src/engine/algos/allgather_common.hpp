// What the allgather algorithms share: the output blocks (block i in recv belongs to rank
// i), with this rank's own block put in place first (out of place: a local copy of send;
// in place, MPI_IN_PLACE: it is already there).
#pragma once

#include "engine/algos/common.hpp"

namespace cb::engine {

struct AllgatherBuffers {
  std::byte* out;
  size_t block;  // bytes per rank

  AllgatherBuffers(Schedule& s, const CollArgs& a, int rank)
      : out(static_cast<std::byte*>(a.recv.ptr)), block(a.count * width(a)) {
    if (!a.in_place) s.copy(at(rank), a.send.ptr, block);
  }
  std::byte* at(int i) const { return out + block * static_cast<size_t>(i); }
};

}  // namespace cb::engine
