// Allgather by ring: in step k every rank passes block r-k to its right neighbour and
// receives block r-k-1 from its left. p-1 steps of n/p bytes: bandwidth-optimal (each
// rank sends and receives (p-1)/p of the result), for large messages.
#include "engine/algos/algos.hpp"
#include "engine/algos/allgather_common.hpp"

namespace cb::engine {
namespace {

void build(Schedule& s, const CollArgs& a, const Group& c) {
  const int n = c.size(), r = c.rank();
  const AllgatherBuffers b(s, a, r);
  const int left = (r + n - 1) % n, right = (r + 1) % n;
  for (int k = 0; k < n - 1; ++k) {
    s.recv(b.at(((r - k - 1) % n + n) % n), b.block, left);
    s.send(b.at(((r - k) % n + n) % n), b.block, right);
    s.end_round();
  }
  s.end_round();
}

}  // namespace

const Algorithm kAllgatherRing{
    .coll = Coll::Allgather,
    .name = "ring",
    .summary = "p-1 ring steps of one block; bandwidth-optimal, for large messages",
    .cannot_run = nullptr,
    .build = build,
};

}  // namespace cb::engine
