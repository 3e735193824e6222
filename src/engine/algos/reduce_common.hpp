// What the reduce algorithms share: the vector a rank accumulates into. The root's result
// goes to recv (its input copied in first unless in place). Elsewhere recv is not part of
// the result (MPI: significant only at the root), so out of place it serves as the
// accumulator; in place it is the rank's input, which must stay as it was: a scratch copy.
#pragma once

#include "engine/algos/common.hpp"

namespace cb::engine {

inline std::byte* reduce_accumulator(Schedule& s, const CollArgs& a, int rank, int root) {
  const size_t bytes = a.count * width(a);
  if (rank == root || !a.in_place) return working_buffer(s, a, bytes);
  std::byte* acc = s.scratch(bytes);
  s.copy(acc, a.recv.ptr, bytes);
  return acc;
}

// This rank's input, read in place (a rank that only sends needs no copy).
inline const std::byte* reduce_input(const CollArgs& a) {
  return static_cast<const std::byte*>(a.in_place ? a.recv.ptr : a.send.ptr);
}

}  // namespace cb::engine
