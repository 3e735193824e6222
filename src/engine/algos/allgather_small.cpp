// Allgather on the small-message slots: every rank copies its block into its slot, then
// every block out of every slot.
#include "engine/algos/algos.hpp"
#include "engine/algos/small_common.hpp"

namespace cb::engine {
namespace {

SmallOp describe(const CollArgs& a, const Group& g) {
  const size_t block = a.count * dtype_size(a.dtype);
  const void* in =
      a.in_place ? static_cast<const std::byte*>(a.recv.ptr) + block * static_cast<size_t>(g.rank())
                 : a.send.ptr;
  return small_op(g, SmallKind::Allgather, in, a.recv.ptr, block);
}

}  // namespace

const Algorithm kAllgatherSmall = small_algorithm<describe>(
    Coll::Allgather, "one node, up to 16 KiB a block: blocks inline in per-rank slots");

}  // namespace cb::engine
