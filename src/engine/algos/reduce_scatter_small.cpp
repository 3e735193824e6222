// Reduce_scatter (block) on the small-message slots: every rank copies its whole input into
// its slot, then reduces its own block of every slot in rank order.
#include "engine/algos/algos.hpp"
#include "engine/algos/small_common.hpp"

namespace cb::engine {
namespace {

SmallOp describe(const CollArgs& a, const Group& g) {
  SmallOp op = small_op(g, SmallKind::ReduceScatter, input_of(a), a.recv.ptr,
                        a.count * dtype_size(a.dtype) * static_cast<size_t>(g.size()));
  op.count = a.count;
  op.dt = a.dtype;
  op.op = a.op;
  return op;
}

}  // namespace

const Algorithm kReduceScatterSmall =
    small_algorithm<describe>(Coll::ReduceScatter,
                              "one node, up to 16 KiB per rank in all: inputs inline in per-rank "
                              "slots, reduced in rank order");

}  // namespace cb::engine
