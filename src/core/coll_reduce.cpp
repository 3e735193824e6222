// Reduce: every rank's `count` elements are reduced into the root's recv (MPI_Reduce,
// ncclReduce). busbw = algbw (nccl-tests: factor 1; each element crosses one link on its
// way to the root). Only the root's result is defined and checked; in place, the root's
// recv holds its input (MPI_IN_PLACE on the root) and every other rank sends from its
// recv, which the operation leaves as it was.
#include "core/coll_spec.hpp"
#include "core/verify.hpp"
#include "core/verify_values.hpp"

namespace cb {
namespace {

double expected(const CollArgs& a, int nranks, size_t i) {
  return values::allreduce_expected(a.dtype, a.op, nranks, i, a.generation);
}

size_t check(const CollArgs& a, int rank, int nranks, const std::byte* recv) {
  if (rank != a.root) return 0;  // MPI: recvbuf is significant only at the root
  return count_wrong(recv, 0, a.count, a.dtype, [&](size_t i) { return expected(a, nranks, i); });
}

size_t same(size_t count, int) {
  return count;
}

}  // namespace

const CollSpec kReduceSpec{
    .coll = Coll::Reduce,
    .reduces = true,
    .rooted = true,
    .send_elements = same,
    .recv_elements = same,
    .algbw_elements = same,
    .bus_factor = [](int) { return 1.0; },
    .fill = fill_reduction,
    .check = check,
    .backends = kAllBackends,
    .device_validation = true,
};

}  // namespace cb
