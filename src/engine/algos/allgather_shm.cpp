// Allgather inside one node: every rank copies the others' blocks straight out of their
// input buffers (one copy per block; process_vm_readv when an input is private memory).
#include "engine/algos/algos.hpp"
#include "engine/algos/shm_common.hpp"

namespace cb::engine {

const Algorithm kAllgatherShm{
    .coll = Coll::Allgather,
    .name = "shm",
    .summary = "shared memory: each rank copies every block from its owner's input directly",
    .cannot_run = [](const CollArgs& a, const Group& g) { return needs_peer_reads(a, g, "shm"); },
    .build =
        [](Schedule& s, const CollArgs& a, const Group& g) {
          const size_t block = a.count * dtype_size(a.dtype);
          auto* out = static_cast<std::byte*>(a.recv.ptr);
          const void* in = a.in_place ? out + block * static_cast<size_t>(g.rank()) : a.send.ptr;
          s.poll(shm_allgather(*g.shm(), s.op() * 4, in, out, block));
          s.end_round();
        },
};

}  // namespace cb::engine
