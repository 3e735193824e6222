// Reduce inside one node on private buffers: rank i reduces block i reading the peers'
// inputs with cross-memory attach, and the root copies the reduced blocks out of the
// others' result buffers (recv out of place, scratch in place), one copy each.
#include "engine/algos/algos.hpp"
#include "engine/algos/shm_common.hpp"

namespace cb::engine {

const Algorithm kReduceCma{
    .coll = Coll::Reduce,
    .name = "cma",
    .summary =
        "private buffers: blocks reduced by all ranks reading peers with "
        "process_vm_readv, gathered at the root",
    .cannot_run = [](const CollArgs& a,
                     const Group& g) { return needs_cma(a, g, "cma", input_of(a)); },
    .build =
        [](Schedule& s, const CollArgs& a, const Group& g) {
          const bool root = g.rank() == a.root;
          void* out = root || !a.in_place ? a.recv.ptr : s.scratch(a.count * dtype_size(a.dtype));
          NodeShm& shm = *g.shm();
          s.poll(shm_reduce(shm, s.op() * 4, input_of(a), out, a.count, a.dtype, a.op,
                            ShmReduceMode::ToLeader, shm.local_of(g.global(a.root)),
                            /*direct=*/true));
          s.end_round();
        },
};

}  // namespace cb::engine
