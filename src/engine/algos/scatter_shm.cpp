// Scatter and scatterv inside one node: each rank copies its block straight out of the
// root's buffer of all blocks (one copy per block, all ranks at once; process_vm_readv
// when the root's buffer is private).
#include "engine/algos/algos.hpp"
#include "engine/algos/shm_blocks.hpp"

namespace cb::engine {
namespace {

void build(Schedule& s, const CollArgs& a, const Group& g) {
  const RankBlocks b(a, g);
  add_shm_blocks(s, a, g, ShmBlocksMode::Scatter, RankBlocks::scatter_input(a), b.scatter_output(a),
                 a.root);
}

std::string cannot_run(const CollArgs& a, const Group& g) {
  return needs_peer_reads(a, g, "shm");
}

constexpr std::string_view kSummary =
    "shared memory: each rank copies its block straight out of the root's buffer";

}  // namespace

const Algorithm kScatterShm{
    .coll = Coll::Scatter,
    .name = "shm",
    .summary = kSummary,
    .cannot_run = cannot_run,
    .build = build,
    .rerunnable = true,
};

const Algorithm kScattervShm{
    .coll = Coll::Scatterv,
    .name = "shm",
    .summary = kSummary,
    .cannot_run = cannot_run,
    .build = build,
    .rerunnable = true,
};

}  // namespace cb::engine
