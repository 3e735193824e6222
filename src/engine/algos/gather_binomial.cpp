// Gather and gatherv by binomial tree over ranks renumbered from the root (gather_tree.hpp):
// log2(p) steps, each rank's subtree in one message; the v form takes each rank's block
// from the count matrix, so both are one algorithm.
#include "engine/algos/algos.hpp"
#include "engine/algos/gather_tree.hpp"

namespace cb::engine {
namespace {

void build(Schedule& s, const CollArgs& a, const Group& g) {
  gather_tree(s, a, g, a.root);
}

constexpr std::string_view kSummary =
    "binomial tree to the root, each subtree in one message; log2(p) steps";

}  // namespace

const Algorithm kGatherBinomial{
    .coll = Coll::Gather,
    .name = "binomial",
    .summary = kSummary,
    .cannot_run = nullptr,
    .build = build,
    .rerunnable = true,
};

const Algorithm kGathervBinomial{
    .coll = Coll::Gatherv,
    .name = "binomial",
    .summary = kSummary,
    .cannot_run = nullptr,
    .build = build,
    .rerunnable = true,
};

}  // namespace cb::engine
