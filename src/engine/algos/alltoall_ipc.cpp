// Alltoall of device buffers on one node over CUDA IPC: every rank stages its input in its
// scratch, then copies its block out of every rank's staged input.
#include "engine/algos/algos.hpp"
#include "engine/algos/ipc_common.hpp"
#include "engine/algos/shm_common.hpp"

namespace cb::engine {

const Algorithm kAlltoallIpc{
    .coll = Coll::Alltoall,
    .name = "ipc",
    .summary =
        "device buffers on one node: every rank copies its blocks out of the others' "
        "staged inputs over CUDA IPC",
    .cannot_run = [](const CollArgs& a, const Group& g) { return needs_ipc(a, g, "ipc"); },
    .build =
        [](Schedule& s, const CollArgs& a, const Group& g) {
          s.set_exclusive();  // one IPC scratch per communicator
          s.poll(ipc_alltoall(*g.shm(), g.comm()->ipc(), s.op() * 4, input_of(a), a.recv.ptr,
                              a.count * dtype_size(a.dtype)));
          s.end_round();
        },
};

}  // namespace cb::engine
