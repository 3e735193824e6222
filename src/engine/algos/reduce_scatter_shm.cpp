// Reduce_scatter (block) inside one node: rank i reduces block i straight out of every
// rank's input (no message copies: each input element is read once, each result element
// written once).
#include "engine/algos/algos.hpp"
#include "engine/algos/shm_common.hpp"

namespace cb::engine {

const Algorithm kReduceScatterShm{
    .coll = Coll::ReduceScatter,
    .name = "shm",
    .summary = "shared memory: each rank reduces its block reading every input in place",
    .cannot_run = [](const CollArgs& a, const Group& g) { return needs_peer_reads(a, g, "shm"); },
    .build =
        [](Schedule& s, const CollArgs& a, const Group& g) {
          s.poll(shm_reduce_scatter(*g.shm(), s.op() * 4, input_of(a), a.recv.ptr, a.count, a.dtype,
                                    a.op));
          s.end_round();
        },
};

}  // namespace cb::engine
