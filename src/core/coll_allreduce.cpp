// Allreduce: Every rank contributes `count` elements and receives their
// reduction. busbw = algbw x 2(n-1)/n: each element crosses 2(n-1) of n links.
#include "core/coll_spec.hpp"
#include "core/verify.hpp"
#include "core/verify_values.hpp"

namespace cb {
namespace {

double expected(const CollArgs& a, int nranks, size_t i) {
  return values::allreduce_expected(a.dtype, a.op, nranks, i, a.generation);
}

size_t check(const CollArgs& a, int, int nranks, const std::byte* recv) {
  return count_wrong(recv, 0, a.count, a.dtype, [&](size_t i) { return expected(a, nranks, i); });
}

}  // namespace

void fill_reduction(const CollArgs& a, int rank, int nranks, std::byte* send, std::byte* recv) {
  std::byte* in = a.in_place ? recv : send;
  for (size_t i = 0; i < a.count; ++i) {
    if (!a.in_place) store_poison(recv, i, a.dtype, expected(a, nranks, i));
    store_element(in, i, a.dtype, input_value(a.dtype, a.op, rank, nranks, i, a.generation));
  }
}

const CollSpec kAllreduceSpec{
    .coll = Coll::Allreduce,
    .reduces = true,
    .rooted = false,
    .send_elements = [](size_t count, int) { return count; },
    .recv_elements = [](size_t count, int) { return count; },
    .algbw_elements = [](size_t count, int) { return count; },
    .bus_factor = [](int n) { return 2.0 * (n - 1) / n; },
    .fill = fill_reduction,
    .check = check,
    .backends = kAllBackends,
    .same_on_all_ranks = true,
    .device_validation = true,
};

}  // namespace cb
