// Alltoall by pairwise exchange: in step k every rank sends to rank + k and receives from
// rank - k, one peer at a time, so no link carries two messages at once. p-1 steps; for
// medium and large messages.
#include "collective/engine/algos/algos.hpp"
#include "collective/engine/algos/alltoall_common.hpp"

namespace cb::engine {
namespace {

void build(Schedule& s, const CollArgs& a, const Group& c) {
  const int n = c.size(), r = c.rank();
  const AlltoallBuffers b(s, a, n);
  s.copy(b.out_block(r), b.in_block(r), b.block);
  for (int k = 1; k < n; ++k) {
    const int to = (r + k) % n, from = (r - k + n) % n;
    s.recv(b.out_block(from), b.block, from);
    s.send(b.in_block(to), b.block, to);
    s.end_round();
  }
  s.end_round();
}

}  // namespace

const Algorithm kAlltoallPairwise{
    .coll = Coll::Alltoall,
    .name = "pairwise",
    .summary = "p-1 steps, one peer each (send to r+k, receive from r-k)",
    .cannot_run = nullptr,
    .build = build,
};

}  // namespace cb::engine
