// Reductions in rank order. A floating-point sum depends on the order of its terms
// ((1 + 1e-16) - 1 is 0, (1e-16 - 1) + 1 is 1.1e-16), so a rank that starts from its own
// contribution computes other bits than its neighbour. MPI programs compare results across
// ranks (convergence tests, checksums): every shared-memory reduction therefore combines
// the local ranks' contributions as ((x0 op x1) op x2) op ..., whichever rank computes an
// element and however the work is split, and every rank gets the same bits.
#pragma once

#include <cstddef>
#include <cstring>
#include <vector>

#include "core/types.hpp"
#include "engine/reduce_host.hpp"

namespace cb::engine {

// dst[0, len) = x_0 op x_1 op ... op x_{n-1}, left to right. `own` is this rank's (rank me)
// contribution; input(r, which) returns rank r's for r != me, where `which` (0 or 1)
// names one of two temporaries a reader may fill, so that the two operands of the first
// step never share one. dst may be `own` (in place): a rank past the first two saves its
// contribution in `save` before the first step overwrites it.
template <typename Input>
void reduce_in_rank_order(std::byte* dst, const std::byte* own, int me, int n, size_t len, Dtype dt,
                          Op op, std::vector<std::byte>& save, Input&& input) {
  const size_t bytes = len * dtype_size(dt);
  if (!bytes) return;
  if (n == 1) {
    if (dst != own) std::memmove(dst, own, bytes);
    return;
  }
  if (dst == own && me >= 2) {
    save.assign(own, own + bytes);
    own = save.data();
  }
  const auto x = [&](int r, int which) -> const std::byte* {
    return r == me ? own : input(r, which);
  };
  reduce_host(dst, x(0, 0), x(1, 1), len, dt, op);
  for (int r = 2; r < n; ++r) reduce_host(dst, x(r, 0), len, dt, op);
}

}  // namespace cb::engine
