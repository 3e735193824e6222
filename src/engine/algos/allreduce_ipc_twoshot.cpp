// Allreduce of device buffers on one node, two-shot (vLLM's and TensorRT-LLM's large-message
// custom allreduce): a reduce-scatter (rank i reduces block i of all ranks' staged inputs)
// then an allgather of the reduced blocks, all over CUDA IPC. Each byte is reduced once.
#include "engine/algos/algos.hpp"
#include "engine/algos/ipc_common.hpp"
#include "engine/algos/shm_common.hpp"

namespace cb::engine {

const Algorithm kAllreduceIpcTwoShot{
    .coll = Coll::Allreduce,
    .name = "ipc_twoshot",
    .summary = "device buffers on one node: reduce-scatter + allgather over CUDA IPC",
    .cannot_run =
        [](const CollArgs& a, const Group& g) {
          if (std::string why = needs_aligned(a, "ipc_twoshot"); !why.empty()) return why;
          return needs_ipc(a, g, "ipc_twoshot");
        },
    .build =
        [](Schedule& s, const CollArgs& a, const Group& g) {
          s.set_exclusive();  // one IPC scratch per communicator
          s.poll(ipc_allreduce(*g.shm(), g.comm()->ipc(), s.op() * 4, input_of(a), a.recv.ptr,
                               a.count, a.dtype, a.op, /*two_shot=*/true));
          s.end_round();
        },
};

}  // namespace cb::engine
