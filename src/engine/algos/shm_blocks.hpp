// What the shared-memory gather(v), scatter(v) and allgatherv share: their blocks in local
// rank order (shm_blocks() numbers the node's ranks, the count matrix the group's) and
// whether they can run.
#pragma once

#include "engine/algos/rank_blocks.hpp"
#include "engine/algos/shm_common.hpp"

namespace cb::engine {

inline void add_shm_blocks(Schedule& s, const CollArgs& a, const Group& g, ShmBlocksMode mode,
                           const void* in, void* out, int root) {
  NodeShm& shm = *g.shm();
  const RankBlocks b(a, g);
  std::vector<size_t> bytes(static_cast<size_t>(g.size())), offsets(bytes.size());
  for (int r = 0; r < g.size(); ++r) {
    const auto local = static_cast<size_t>(shm.local_of(g.global(r)));
    bytes[local] = b.bytes(r);
    offsets[local] = b.offset(r);
  }
  s.poll(shm_blocks(shm, s.op() * 4, mode, in, out, std::move(bytes), std::move(offsets),
                    shm.local_of(g.global(root))));
  s.end_round();
}

// Gather: peers write into the root's buffer when it is shared, else the root reads their
// inputs, which needs them shared or cross-memory attach. Ranks pass buffers of one kind
// (the benchmarks' --alloc), so every rank answers alike.
inline std::string gather_shm_cannot_run(const CollArgs& a, const Group& g) {
  if (std::string why = needs_node_shm(a, g, "shm"); !why.empty()) return why;
  if (g.shm()->is_shared(a.recv.ptr)) return {};
  return needs_peer_reads(a, g, "shm");
}

}  // namespace cb::engine
