// Reduce inside one node through shared memory: rank i reduces block i of each cache-sized
// chunk reading every rank's input in place, and the root copies the reduced blocks (the
// first half of the shm allreduce, gathered at the root only). Out of place a non-root's
// recv takes its reduced blocks; in place its recv is its input, so they go to scratch.
#include "engine/algos/algos.hpp"
#include "engine/algos/shm_common.hpp"

namespace cb::engine {
namespace {

void build(Schedule& s, const CollArgs& a, const Group& g) {
  const bool root = g.rank() == a.root;
  void* out = root || !a.in_place ? a.recv.ptr : s.scratch(a.count * dtype_size(a.dtype));
  NodeShm& shm = *g.shm();
  s.poll(shm_reduce(shm, s.op() * 4, input_of(a), out, a.count, a.dtype, a.op,
                    ShmReduceMode::ToLeader, shm.local_of(g.global(a.root))));
  s.end_round();
}

}  // namespace

const Algorithm kReduceShm{
    .coll = Coll::Reduce,
    .name = "shm",
    .summary =
        "shared memory: blocks reduced by all ranks from inputs read in place, gathered "
        "at the root",
    .cannot_run = [](const CollArgs& a, const Group& g) { return needs_node_shm(a, g, "shm"); },
    .build = build,
};

}  // namespace cb::engine
