// Bcast inside one node through shared memory: every rank copies the root's buffer
// directly (single copy), or through the root's staging ring when it is private memory.
#include "engine/algos/algos.hpp"
#include "engine/algos/shm_common.hpp"

namespace cb::engine {

const Algorithm kBcastShm{
    .coll = Coll::Bcast,
    .name = "shm",
    .summary = "shared memory: every rank copies from the root's buffer directly",
    .cannot_run = [](const CollArgs& a, const Group& g) { return needs_node_shm(a, g, "shm"); },
    .build =
        [](Schedule& s, const CollArgs& a, const Group& g) {
          s.poll(
              shm_bcast(*g.shm(), s.op() * 4, a.recv.ptr, a.count * dtype_size(a.dtype), a.root));
          s.end_round();
        },
};

}  // namespace cb::engine
