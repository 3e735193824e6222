// Hierarchical collectives across nodes: shared memory inside each node, an ordinary
// algorithm among one rank per node over the MPI transport.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "engine/algos/shm_common.hpp"

namespace cb::engine {

inline std::string needs_hierarchy(const CollArgs& a, const Group& g, std::string_view algo) {
  if (a.recv.mem == Mem::Cuda)
    return std::string(algo) +
           " uses host shared memory inside nodes (device buffers: not implemented)";
  const Comm* c = g.comm();
  if (!c || g.size() != c->size())
    return std::string(algo) + " runs on the whole communicator only";
  if (c->node_count() < 2)
    return std::string(algo) +
           " needs ranks on at least two nodes (or virtual nodes: CB_RANKS_PER_NODE=k)";
  if (!c->shm()) return std::string(algo) + " needs shared memory (" + c->shm_status() + ")";
  return {};
}

// Appends `inter` run among `members` (one communicator rank per node) when this rank is
// one of them; the schedule maps the inter-node group's ranks back afterwards.
inline void among(Schedule& s, const Group& whole, const std::vector<int>& members,
                  const Algorithm& inter, const CollArgs& args) {
  const auto me = std::find(members.begin(), members.end(), whole.rank());
  if (me != members.end()) {
    const Group group(static_cast<int>(me - members.begin()), members);
    s.set_group(&group);
    inter.build(s, args, group);
    s.set_group(&whole);
  }
  s.end_round();
}

}  // namespace cb::engine
