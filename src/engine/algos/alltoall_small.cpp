// Alltoall on the small-message slots: every rank copies its whole input (a block per peer)
// into its slot, then takes its block out of every slot.
#include "engine/algos/algos.hpp"
#include "engine/algos/small_common.hpp"

namespace cb::engine {

const Algorithm kAlltoallSmall = small_algorithm<SmallKind::Alltoall>(
    Coll::Alltoall, "one node, up to 16 KiB per rank in all: inputs inline in per-rank slots");

}  // namespace cb::engine
