// Allgatherv inside one node: every rank copies each block straight out of its owner's
// input into its place in its own buffer (one copy per block; process_vm_readv when an
// input is private), at the count matrix's offsets.
#include "engine/algos/algos.hpp"
#include "engine/algos/shm_blocks.hpp"

namespace cb::engine {

const Algorithm kAllgathervShm{
    .coll = Coll::Allgatherv,
    .name = "shm",
    .summary = "shared memory: each rank copies every block from its owner's input directly",
    .cannot_run = [](const CollArgs& a, const Group& g) { return needs_peer_reads(a, g, "shm"); },
    .build =
        [](Schedule& s, const CollArgs& a, const Group& g) {
          const RankBlocks b(a, g);
          add_shm_blocks(s, a, g, ShmBlocksMode::Allgather, b.gather_input(a), a.recv.ptr, 0);
        },
    .rerunnable = true,
};

}  // namespace cb::engine
