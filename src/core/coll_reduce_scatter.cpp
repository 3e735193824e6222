// Reduce_scatter (block, as MPI_Reduce_scatter_block and ncclReduceScatter): every rank
// contributes n blocks of `count` elements (the message size is the block per rank, as
// OMB's osu_reduce_scatter with equal counts) and receives block `rank` of their
// reduction. algbw counts the whole input (count x n, as nccl-tests); busbw = algbw x
// (n-1)/n. In place (MPI_IN_PLACE as sendbuf): recv holds the n input blocks and the result
// replaces its first block.
#include "core/coll_spec.hpp"
#include "core/verify.hpp"
#include "core/verify_values.hpp"

namespace cb {
namespace {

// Element j of the result on `rank`: element rank x count + j of the allreduce.
double expected(const CollArgs& a, int rank, int nranks, size_t j) {
  return values::allreduce_expected(a.dtype, a.op, nranks,
                                    static_cast<uint64_t>(rank) * a.count + j, a.generation);
}

void fill(const CollArgs& a, int rank, int nranks, std::byte* send, std::byte* recv) {
  std::byte* in = a.in_place ? recv : send;
  const size_t all = a.count * static_cast<size_t>(nranks);
  if (!a.in_place)
    for (size_t j = 0; j < a.count; ++j)
      store_poison(recv, j, a.dtype, expected(a, rank, nranks, j));
  for (size_t k = 0; k < all; ++k)
    store_element(in, k, a.dtype, input_value(a.dtype, a.op, rank, nranks, k, a.generation));
}

size_t check(const CollArgs& a, int rank, int nranks, const std::byte* recv) {
  return count_wrong(recv, 0, a.count, a.dtype,
                     [&](size_t j) { return expected(a, rank, nranks, j); });
}

size_t times_n(size_t count, int n) {
  return count * static_cast<size_t>(n);
}

}  // namespace

const CollSpec kReduceScatterSpec{
    .coll = Coll::ReduceScatter,
    .reduces = true,
    .rooted = false,
    .send_elements = times_n,
    .recv_elements = [](size_t count, int) { return count; },
    .algbw_elements = times_n,
    .bus_factor = [](int n) { return (n - 1.0) / n; },
    .fill = fill,
    .check = check,
    .backends = kAllBackends,
    .in_place_recv_elements = times_n,
    .device_validation = true,
};

}  // namespace cb
