// Allreduce inside one node on private buffers (a program's own memory) with single
// copies: rank i reduces block i of the whole vector reading the peers' inputs with
// cross-memory attach, then copies the other blocks out of their owners' outputs
// (MVAPICH2's and Open MPI's CMA approach). Where the kernel's copy is slower than
// memcpy, the staged "shm" wins; the tuning table says which, per size.
#include "engine/algos/algos.hpp"
#include "engine/algos/shm_common.hpp"

namespace cb::engine {

const Algorithm kAllreduceCma{
    .coll = Coll::Allreduce,
    .name = "cma",
    .summary = "private buffers: reduce-scatter + gather reading peers with process_vm_readv",
    .cannot_run = [](const CollArgs& a,
                     const Group& g) { return needs_cma(a, g, "cma", input_of(a)); },
    .build =
        [](Schedule& s, const CollArgs& a, const Group& g) {
          s.poll(shm_reduce(*g.shm(), s.op() * 4, input_of(a), a.recv.ptr, a.count, a.dtype, a.op,
                            ShmReduceMode::Scatter, 0, /*direct=*/true));
          s.end_round();
        },
};

}  // namespace cb::engine
