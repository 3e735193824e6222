// Allreduce inside one node through shared memory (MVAPICH2-X style direct reads, no
// message copies): `shm_flat` has every rank reduce the whole vector from all inputs (two
// synchronisations: small messages); `shm` has rank i reduce block i of each cache-sized
// chunk from all inputs, then every rank copy the other blocks (reduce-scatter + gather,
// each element read p times and written twice in total: large messages).
#include "engine/algos/algos.hpp"
#include "engine/algos/shm_common.hpp"

namespace cb::engine {
namespace {

void build(Schedule& s, const CollArgs& a, const Group& g, ShmReduceMode mode) {
  s.poll(shm_reduce(*g.shm(), s.op() * 4, input_of(a), a.recv.ptr, a.count, a.dtype, a.op, mode));
  s.end_round();
}

}  // namespace

const Algorithm kAllreduceShmFlat{
    .coll = Coll::Allreduce,
    .name = "shm_flat",
    .summary = "shared memory: every rank reduces all inputs read in place; small messages",
    .cannot_run = [](const CollArgs& a,
                     const Group& g) { return needs_node_shm(a, g, "shm_flat"); },
    .build = [](Schedule& s, const CollArgs& a,
                const Group& g) { build(s, a, g, ShmReduceMode::Flat); },
};

const Algorithm kAllreduceShm{
    .coll = Coll::Allreduce,
    .name = "shm",
    .summary = "shared memory: reduce-scatter + gather by direct reads, pipelined in chunks",
    .cannot_run = [](const CollArgs& a, const Group& g) { return needs_node_shm(a, g, "shm"); },
    .build = [](Schedule& s, const CollArgs& a,
                const Group& g) { build(s, a, g, ShmReduceMode::Scatter); },
};

}  // namespace cb::engine
