// Reduce on the small-message slots: every rank but the root copies its vector into its
// slot; the root reduces them with its own input in rank order.
#include "engine/algos/algos.hpp"
#include "engine/algos/small_common.hpp"

namespace cb::engine {
namespace {

SmallOp describe(const CollArgs& a, const Group& g) {
  SmallOp op =
      small_op(g, SmallKind::Reduce, input_of(a), a.recv.ptr, a.count * dtype_size(a.dtype));
  op.count = a.count;
  op.dt = a.dtype;
  op.op = a.op;
  op.root = a.root;
  return op;
}

}  // namespace

const Algorithm kReduceSmall = small_algorithm<describe>(
    Coll::Reduce,
    "one node, up to 16 KiB: inputs inline in per-rank slots, the root reduces in rank order");

}  // namespace cb::engine
