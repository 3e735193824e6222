// Bcast on the small-message slots: the root copies the message into its slot, every other
// rank copies it out once the root has arrived.
#include "engine/algos/algos.hpp"
#include "engine/algos/small_common.hpp"

namespace cb::engine {

const Algorithm kBcastSmall = small_algorithm<SmallKind::Bcast>(
    Coll::Bcast,
    "one node, up to 16 KiB: the root's message inline in its slot, copied out by all");

}  // namespace cb::engine
