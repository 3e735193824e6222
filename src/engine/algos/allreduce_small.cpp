// Allreduce on the small-message slots: every rank copies its vector into its slot, then
// reduces all slots in rank order (the same bits on every rank).
#include "engine/algos/algos.hpp"
#include "engine/algos/small_common.hpp"

namespace cb::engine {
namespace {

SmallOp describe(const CollArgs& a, const Group& g) {
  SmallOp op =
      small_op(g, SmallKind::Allreduce, input_of(a), a.recv.ptr, a.count * dtype_size(a.dtype));
  op.count = a.count;
  op.dt = a.dtype;
  op.op = a.op;
  return op;
}

}  // namespace

const Algorithm kAllreduceSmall = small_algorithm<describe>(
    Coll::Allreduce,
    "one node, up to 16 KiB: inputs inline in per-rank slots, reduced in rank order");

}  // namespace cb::engine
