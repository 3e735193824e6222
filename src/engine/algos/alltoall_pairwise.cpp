// Alltoall by pairwise exchange: in step k every rank sends to rank + k and receives from
// rank - k, one peer at a time, so no link carries two messages at once. p-1 steps; for
// medium and large messages.
#include "engine/algos/algos.hpp"
#include "engine/algos/alltoall_common.hpp"

namespace cb::engine {
namespace {

void build(Schedule& s, const CollArgs& a, const Group& c) {
  shifted_exchange(s, a, c, 1);
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
