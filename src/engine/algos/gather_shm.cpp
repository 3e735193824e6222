// Gather and gatherv inside one node: each rank copies its block straight into the root's
// buffer (one copy per block, all ranks at once), or, when the root's buffer is private,
// the root copies every block out of the ranks' inputs (process_vm_readv if private).
#include "engine/algos/algos.hpp"
#include "engine/algos/shm_blocks.hpp"

namespace cb::engine {
namespace {

void build(Schedule& s, const CollArgs& a, const Group& g) {
  const RankBlocks b(a, g);
  add_shm_blocks(s, a, g, ShmBlocksMode::Gather, b.gather_input(a), a.recv.ptr, a.root);
}

constexpr std::string_view kSummary =
    "shared memory: each rank copies its block straight into the root's buffer";

}  // namespace

const Algorithm kGatherShm{
    .coll = Coll::Gather,
    .name = "shm",
    .summary = kSummary,
    .cannot_run = gather_shm_cannot_run,
    .build = build,
    .rerunnable = true,
};

const Algorithm kGathervShm{
    .coll = Coll::Gatherv,
    .name = "shm",
    .summary = kSummary,
    .cannot_run = gather_shm_cannot_run,
    .build = build,
    .rerunnable = true,
};

}  // namespace cb::engine
