// Bcast: The root's `count` elements reach every rank; busbw = algbw.
#include "core/coll_spec.hpp"
#include "core/verify.hpp"

namespace cb {
namespace {

double expected(const CollArgs& a, int nranks, size_t i) {
  return input_value(a.dtype, Op::Max, a.root, nranks, i, a.generation);
}

void fill(const CollArgs& a, int rank, int nranks, std::byte*, std::byte* recv) {
  for (size_t i = 0; i < a.count; ++i) {
    if (rank == a.root)
      store_element(recv, i, a.dtype, expected(a, nranks, i));
    else
      store_poison(recv, i, a.dtype, expected(a, nranks, i));
  }
}

size_t check(const CollArgs& a, int, int nranks, const std::byte* recv) {
  return count_wrong(recv, 0, a.count, a.dtype, [&](size_t i) { return expected(a, nranks, i); });
}

}  // namespace

const CollSpec kBcastSpec{
    .coll = Coll::Bcast,
    .reduces = false,
    .rooted = true,
    .send_elements = [](size_t, int) { return size_t{0}; },
    .recv_elements = [](size_t count, int) { return count; },
    .algbw_elements = [](size_t count, int) { return count; },
    .bus_factor = [](int) { return 1.0; },
    .fill = fill,
    .check = check,
    .backends = kAllBackends,
    .same_on_all_ranks = true,
    .device_validation = true,
};

}  // namespace cb
