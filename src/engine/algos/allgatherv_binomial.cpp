// Allgatherv as the binomial gather to rank 0 (gather_tree.hpp) followed by a binomial
// bcast of all blocks from it: 2 log2(p) steps, one message per tree edge each way, so for
// small blocks, where the ring's p - 1 steps cost more than the data. The count matrix
// gives each rank's block; without one every block is `count`.
#include "engine/algos/algos.hpp"
#include "engine/algos/gather_tree.hpp"

namespace cb::engine {
namespace {

void build(Schedule& s, const CollArgs& a, const Group& g) {
  gather_tree(s, a, g, 0);
  const RankBlocks b(a, g);
  const int n = g.size(), me = g.rank();
  const size_t all = b.offset(n - 1) + b.bytes(n - 1);
  auto* data = static_cast<std::byte*>(a.recv.ptr);
  // Bcast from rank 0: receive from the parent (me minus its lowest set bit), then send to
  // the children, largest subtree first.
  int mask = 1;
  for (; mask < n; mask <<= 1)
    if (me & mask) {
      s.recv(data, all, me - mask);
      s.end_round();
      break;
    }
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (me + mask < n) s.send(data, all, me + mask);
  s.end_round();
}

}  // namespace

const Algorithm kAllgathervBinomial{
    .coll = Coll::Allgatherv,
    .name = "binomial",
    .summary = "binomial gather to rank 0, then binomial bcast of all blocks; 2 log2(p) steps",
    .cannot_run = nullptr,
    .build = build,
    .rerunnable = true,
};

}  // namespace cb::engine
