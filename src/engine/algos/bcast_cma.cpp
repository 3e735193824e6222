// Bcast inside one node on private buffers: every rank copies the root's buffer with
// cross-memory attach, one copy, where "shm" stages it through shared memory (two).
#include "engine/algos/algos.hpp"
#include "engine/algos/shm_common.hpp"

namespace cb::engine {

const Algorithm kBcastCma{
    .coll = Coll::Bcast,
    .name = "cma",
    .summary = "private buffers: every rank reads the root's buffer with process_vm_readv",
    .cannot_run = [](const CollArgs& a,
                     const Group& g) { return needs_cma(a, g, "cma", a.recv.ptr); },
    .build =
        [](Schedule& s, const CollArgs& a, const Group& g) {
          NodeShm& shm = *g.shm();
          s.poll(shm_bcast(shm, s.op() * 4, a.recv.ptr, a.count * dtype_size(a.dtype),
                           shm.local_of(g.global(a.root)), /*direct=*/true));
          s.end_round();
        },
};

}  // namespace cb::engine
