// Alltoallv on the small-message slots: every rank copies its send buffer (its blocks packed
// in rank order) into its slot, then takes its block out of every slot at the count
// matrix's offsets. Runs while the largest send buffer fits the slot.
#include "engine/algos/algos.hpp"
#include "engine/algos/small_common.hpp"

namespace cb::engine {

const Algorithm kAlltoallvSmall = small_algorithm<SmallKind::Alltoallv>(
    Coll::Alltoallv, "one node, up to 16 KiB sent per rank: send buffers inline in per-rank slots");

}  // namespace cb::engine
