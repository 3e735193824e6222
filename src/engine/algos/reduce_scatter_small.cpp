// Reduce_scatter (block) on the small-message slots: every rank copies its whole input into
// its slot, then reduces its own block of every slot in rank order.
#include "engine/algos/algos.hpp"
#include "engine/algos/small_common.hpp"

namespace cb::engine {

const Algorithm kReduceScatterSmall = small_algorithm<SmallKind::ReduceScatter>(
    Coll::ReduceScatter,
    "one node, up to 16 KiB per rank in all: inputs inline in per-rank "
    "slots, reduced in rank order");

}  // namespace cb::engine
