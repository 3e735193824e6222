// Barrier on the small-message slots: every rank publishes its arrival and waits for all.
#include "engine/algos/algos.hpp"
#include "engine/algos/small_common.hpp"

namespace cb::engine {
namespace {

SmallOp describe(const CollArgs&, const Group& g) {
  return small_op(g, SmallKind::Barrier, nullptr, nullptr, 0);
}

}  // namespace

const Algorithm kBarrierSmall = small_algorithm<describe>(
    Coll::Barrier,
    "one node: one arrival counter per rank on its own cache line, all wait for all");

}  // namespace cb::engine
