// Alltoall inside one node: every rank copies its blocks straight out of the others'
// buffers (one copy per block; process_vm_readv when a buffer is private memory).
#include "engine/algos/algos.hpp"
#include "engine/algos/shm_common.hpp"

namespace cb::engine {

const Algorithm kAlltoallShm{
    .coll = Coll::Alltoall,
    .name = "shm",
    .summary = "shared memory: each rank copies its blocks from the others' buffers directly",
    .cannot_run = [](const CollArgs& a, const Group& g) { return needs_peer_reads(a, g, "shm"); },
    .build =
        [](Schedule& s, const CollArgs& a, const Group& g) {
          s.poll(shm_alltoall(*g.shm(), s.op() * 4, input_of(a), a.recv.ptr,
                              a.count * dtype_size(a.dtype)));
          s.end_round();
        },
};

}  // namespace cb::engine
