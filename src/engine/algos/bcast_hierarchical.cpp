// Hierarchical bcast: through shared memory on the root's node, then among one rank per
// node over MPI (the root for its node, the first rank elsewhere; binomial for small,
// scatter + allgather for large messages; the threshold is the tuning parameter
// hierarchical_bcast_small_bytes), then through shared memory on the other nodes.
#include "engine/algos/algos.hpp"
#include "engine/algos/hierarchy.hpp"

namespace cb::engine {
namespace {

void build(Schedule& s, const CollArgs& a, const Group& g) {
  const Comm& c = *g.comm();
  NodeShm& shm = *c.shm();
  const size_t bytes = a.count * dtype_size(a.dtype);
  const int root_node = c.node_of(a.root);
  const bool on_root_node = c.node_of(g.rank()) == root_node;
  if (on_root_node) s.poll(shm_bcast(shm, s.op() * 4, a.recv.ptr, bytes, shm.local_of(a.root)));
  s.end_round();
  std::vector<int> reps = c.leaders();
  reps[static_cast<size_t>(root_node)] = a.root;
  CollArgs inter = a;
  inter.root = root_node;  // position of the root's node among the representatives
  const bool small = bytes <= c.tuning().hierarchical_bcast_small_bytes;
  among(s, g, reps, small ? kBcastBinomial : kBcastScatterAllgather, inter);
  if (!on_root_node) s.poll(shm_bcast(shm, s.op() * 4 + 1, a.recv.ptr, bytes, 0));
  s.end_round();
}

}  // namespace

const Algorithm kBcastHierarchical{
    .coll = Coll::Bcast,
    .name = "hierarchical",
    .summary = "shared memory on each node, binomial or scatter-allgather among nodes",
    .cannot_run = [](const CollArgs& a,
                     const Group& g) { return needs_hierarchy(a, g, "hierarchical"); },
    .build = build,
};

}  // namespace cb::engine
