// Bcast on the small-message slots: the root copies the message into its slot, every other
// rank copies it out once the root has arrived.
#include "engine/algos/algos.hpp"
#include "engine/algos/small_common.hpp"

namespace cb::engine {
namespace {

SmallOp describe(const CollArgs& a, const Group& g) {
  SmallOp op = small_op(g, SmallKind::Bcast, a.recv.ptr, a.recv.ptr, a.count * dtype_size(a.dtype));
  op.root = a.root;
  return op;
}

}  // namespace

const Algorithm kBcastSmall = small_algorithm<describe>(
    Coll::Bcast,
    "one node, up to 16 KiB: the root's message inline in its slot, copied out by all");

}  // namespace cb::engine
