// Allreduce of device buffers on one node, one-shot (vLLM's and TensorRT-LLM's small-message
// custom allreduce): each rank stages its input in its IPC scratch, then reduces all ranks'
// staged inputs itself. Fewest synchronisations; every rank reads n x the data.
#include "engine/algos/algos.hpp"
#include "engine/algos/ipc_common.hpp"
#include "engine/algos/shm_common.hpp"

namespace cb::engine {

const Algorithm kAllreduceIpcOneShot{
    .coll = Coll::Allreduce,
    .name = "ipc_oneshot",
    .summary = "device buffers on one node: every rank reduces all ranks' inputs over CUDA IPC",
    .cannot_run =
        [](const CollArgs& a, const Group& g) {
          if (std::string why = needs_aligned(a, "ipc_oneshot"); !why.empty()) return why;
          return needs_ipc(a, g, "ipc_oneshot");
        },
    .build =
        [](Schedule& s, const CollArgs& a, const Group& g) {
          s.set_exclusive();  // one IPC scratch per communicator
          s.poll(ipc_allreduce(*g.shm(), g.comm()->ipc(), s.op() * 4, input_of(a), a.recv.ptr,
                               a.count, a.dtype, a.op, /*two_shot=*/false));
          s.end_round();
        },
};

}  // namespace cb::engine
