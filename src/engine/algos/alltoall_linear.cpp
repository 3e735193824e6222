// Alltoall by linear exchange with a window: messages to and from up to W peers are in
// flight at once (all of them when W >= p-1), in rounds of W. Fewer rounds than pairwise,
// at the cost of congestion. W: CB_ALLTOALL_WINDOW (default 8).
#include "engine/algos/algos.hpp"
#include "engine/algos/alltoall_common.hpp"
#include "engine/settings.hpp"

namespace cb::engine {
namespace {

void build(Schedule& s, const CollArgs& a, const Group& c) {
  shifted_exchange(s, a, c, engine_settings().alltoall_window);
}

}  // namespace

const Algorithm kAlltoallLinear{
    .coll = Coll::Alltoall,
    .name = "linear",
    .summary = "all peers at once, in windows of CB_ALLTOALL_WINDOW (8) peers",
    .cannot_run = nullptr,
    .build = build,
};

}  // namespace cb::engine
