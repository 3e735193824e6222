// Allgather: every rank contributes `count` elements (the message size is per rank, as
// OMB's osu_allgather) and receives all n blocks, block i from rank i. algbw counts the
// whole result (count x n, as nccl-tests); busbw = algbw x (n-1)/n: a rank's own block
// crosses no link. In place (MPI_IN_PLACE as sendbuf): a rank's input is already block
// `rank` of recv.
#include "core/coll_spec.hpp"
#include "core/verify.hpp"
#include "core/verify_values.hpp"

namespace cb {
namespace {

// Element j of rank `from`'s contribution (Op::Max's range: nothing accumulates).
double block_value(const CollArgs& a, int from, int nranks, size_t j) {
  return values::allgather_value(a.dtype, from, nranks, j, a.generation);
}

void fill(const CollArgs& a, int rank, int nranks, std::byte* send, std::byte* recv) {
  for (int from = 0; from < nranks; ++from) {
    const size_t base = static_cast<size_t>(from) * a.count;
    for (size_t j = 0; j < a.count; ++j) {
      const double v = block_value(a, from, nranks, j);
      if (a.in_place && from == rank)
        store_element(recv, base + j, a.dtype, v);
      else
        store_poison(recv, base + j, a.dtype, v);
    }
  }
  if (!a.in_place)
    for (size_t j = 0; j < a.count; ++j)
      store_element(send, j, a.dtype, block_value(a, rank, nranks, j));
}

size_t check(const CollArgs& a, int, int nranks, const std::byte* recv) {
  size_t wrong = 0;
  for (int from = 0; from < nranks; ++from)
    wrong += count_wrong(recv, static_cast<size_t>(from) * a.count, a.count, a.dtype,
                         [&](size_t j) { return block_value(a, from, nranks, j); });
  return wrong;
}

size_t times_n(size_t count, int n) {
  return count * static_cast<size_t>(n);
}

}  // namespace

const CollSpec kAllgatherSpec{
    .coll = Coll::Allgather,
    .reduces = false,
    .rooted = false,
    .send_elements = [](size_t count, int) { return count; },
    .recv_elements = times_n,
    .algbw_elements = times_n,
    .bus_factor = [](int n) { return (n - 1.0) / n; },
    .fill = fill,
    .check = check,
    .backends = kAllBackends,
    .same_on_all_ranks = true,
    .device_validation = true,
};

}  // namespace cb
