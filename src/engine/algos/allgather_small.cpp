// Allgather on the small-message slots: every rank copies its block into its slot, then
// every block out of every slot.
#include "engine/algos/algos.hpp"
#include "engine/algos/small_common.hpp"

namespace cb::engine {

const Algorithm kAllgatherSmall = small_algorithm<SmallKind::Allgather>(
    Coll::Allgather, "one node, up to 16 KiB a block: blocks inline in per-rank slots");

}  // namespace cb::engine
