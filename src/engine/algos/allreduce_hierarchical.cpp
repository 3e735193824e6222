// Hierarchical allreduce: reduce inside each node through shared memory into its first
// rank, allreduce among those node leaders over MPI (recursive doubling for small, ring
// for large vectors; the threshold is the tuning parameter
// hierarchical_allreduce_small_bytes), then broadcast inside each node through shared
// memory. Only one rank per node crosses the network, with the whole node's contribution.
#include "engine/algos/algos.hpp"
#include "engine/algos/hierarchy.hpp"

namespace cb::engine {
namespace {

void build(Schedule& s, const CollArgs& a, const Group& g) {
  const Comm& c = *g.comm();
  NodeShm& shm = *c.shm();
  const size_t bytes = a.count * dtype_size(a.dtype);
  const bool small = bytes <= c.tuning().hierarchical_allreduce_small_bytes;
  s.poll(shm_reduce(shm, s.op() * 4, input_of(a), a.recv.ptr, a.count, a.dtype, a.op,
                    small ? ShmReduceMode::Flat : ShmReduceMode::ToLeader));
  s.end_round();
  CollArgs leaders = a;
  leaders.in_place = true;
  leaders.send = leaders.recv;
  const auto nodes = static_cast<size_t>(c.node_count());
  const Algorithm& inter = small || a.count < nodes ? kAllreduceRecursiveDoubling : kAllreduceRing;
  among(s, g, c.leaders(), inter, leaders);
  s.poll(shm_bcast(shm, s.op() * 4 + 1, a.recv.ptr, bytes, 0));
  s.end_round();
}

}  // namespace

const Algorithm kAllreduceHierarchical{
    .coll = Coll::Allreduce,
    .name = "hierarchical",
    .summary = "shared-memory reduce per node, allreduce among node leaders, shared-memory bcast",
    .cannot_run = [](const CollArgs& a,
                     const Group& g) { return needs_hierarchy(a, g, "hierarchical"); },
    .build = build,
};

}  // namespace cb::engine
