// The steps around a power-of-two core (recursive doubling, Rabenseifner) for rank counts
// that are not a power of two; see partition/fold.hpp.
#pragma once

#include "engine/algos/common.hpp"
#include "engine/partition/fold.hpp"

namespace cb::engine {

// Ranks that sit out hand their vector to the rank above and wait for the result; the
// takers add it to their own. Returns whether this rank takes part in the core.
inline bool fold_in(Schedule& s, const PowerOfTwoFold& f, int rank, const CollArgs& a,
                    std::byte* data, std::byte* tmp) {
  const size_t bytes = a.count * width(a);
  if (f.sits_out()) {
    s.send(data, bytes, rank + 1);
    s.end_round();
    s.recv(data, bytes, rank + 1);
    s.end_round();
    return false;
  }
  if (f.takes_partner(rank)) {
    s.recv(tmp, bytes, rank - 1);
    s.end_round();
    s.reduce(data, tmp, a.count, a.dtype, a.op);
  }
  return true;
}

// Takers return the result to the rank that sat out.
inline void fold_out(Schedule& s, const PowerOfTwoFold& f, int rank, const CollArgs& a,
                     const std::byte* data) {
  if (f.takes_partner(rank)) s.send(data, a.count * width(a), rank - 1);
  s.end_round();
}

}  // namespace cb::engine
