// Reduce on the small-message slots: every rank but the root copies its vector into its
// slot; the root reduces them with its own input in rank order.
#include "engine/algos/algos.hpp"
#include "engine/algos/small_common.hpp"

namespace cb::engine {

const Algorithm kReduceSmall = small_algorithm<SmallKind::Reduce>(
    Coll::Reduce,
    "one node, up to 16 KiB: inputs inline in per-rank slots, the root reduces in rank order");

}  // namespace cb::engine
