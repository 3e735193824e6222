// Bcast of device buffers on one node over CUDA IPC: the root stages its buffer in its
// scratch, every other rank copies it out from there.
#include "engine/algos/algos.hpp"
#include "engine/algos/ipc_common.hpp"

namespace cb::engine {

const Algorithm kBcastIpc{
    .coll = Coll::Bcast,
    .name = "ipc",
    .summary = "device buffers on one node: copies out of the root's scratch over CUDA IPC",
    .cannot_run = [](const CollArgs& a, const Group& g) { return needs_ipc(a, g, "ipc"); },
    .build =
        [](Schedule& s, const CollArgs& a, const Group& g) {
          s.set_exclusive();  // one IPC scratch per communicator
          s.poll(ipc_bcast(*g.shm(), g.comm()->ipc(), s.op() * 4, a.recv.ptr,
                           a.count * dtype_size(a.dtype), a.root));
          s.end_round();
        },
};

}  // namespace cb::engine
