// Allreduce on the small-message slots: every rank copies its vector into its slot, then
// reduces all slots in rank order (the same bits on every rank).
#include "engine/algos/algos.hpp"
#include "engine/algos/small_common.hpp"

namespace cb::engine {

const Algorithm kAllreduceSmall = small_algorithm<SmallKind::Allreduce>(
    Coll::Allreduce,
    "one node, up to 16 KiB: inputs inline in per-rank slots, reduced in rank order");

}  // namespace cb::engine
