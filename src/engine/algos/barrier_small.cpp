// Barrier on the small-message slots: every rank publishes its arrival and waits for all.
#include "engine/algos/algos.hpp"
#include "engine/algos/small_common.hpp"

namespace cb::engine {

const Algorithm kBarrierSmall = small_algorithm<SmallKind::Barrier>(
    Coll::Barrier,
    "one node: one arrival counter per rank on its own cache line, all wait for all");

}  // namespace cb::engine
