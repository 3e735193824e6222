// Alltoallv inside one node: every rank copies its blocks straight out of the others'
// buffers, at the count matrix's offsets (one copy per block).
#include "core/vcounts.hpp"
#include "engine/algos/algos.hpp"
#include "engine/algos/shm_common.hpp"

namespace cb::engine {
namespace {

std::string cannot_run(const CollArgs& a, const Group& g) {
  if (!a.counts) return "alltoallv needs its count matrix";
  if (a.in_place) return "alltoallv has no in-place form";
  return needs_peer_reads(a, g, "shm");
}

}  // namespace

const Algorithm kAlltoallvShm{
    .coll = Coll::Alltoallv,
    .name = "shm",
    .summary = "shared memory: each rank copies its blocks from the others' buffers directly",
    .cannot_run = cannot_run,
    .build =
        [](Schedule& s, const CollArgs& a, const Group& g) {
          s.poll(shm_alltoallv(*g.shm(), s.op() * 4, a.send.ptr, a.recv.ptr, *a.counts,
                               dtype_size(a.dtype)));
          s.end_round();
        },
};

}  // namespace cb::engine
