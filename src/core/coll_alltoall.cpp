// Alltoall: Each rank sends `count` elements to every rank (the message
// size is per peer, as OMB). algbw counts the whole buffer (count x n, as nccl-tests);
// busbw = algbw x (n-1)/n: the block a rank keeps for itself crosses no link.
#include "core/coll_spec.hpp"
#include "core/verify.hpp"

namespace cb {
namespace {

// Element j of the block that rank `from` sends to rank `to`.
double block_value(const CollArgs& a, int from, int to, int nranks, size_t j) {
  return input_value(a.dtype, Op::Max, from, nranks, static_cast<uint64_t>(to) * a.count + j,
                     a.generation);
}

void fill(const CollArgs& a, int rank, int nranks, std::byte* send, std::byte* recv) {
  std::byte* in = a.in_place ? recv : send;
  for (int peer = 0; peer < nranks; ++peer) {
    const size_t base = static_cast<size_t>(peer) * a.count;
    for (size_t j = 0; j < a.count; ++j) {
      if (!a.in_place) store_poison(recv, base + j, a.dtype, block_value(a, peer, rank, nranks, j));
      store_element(in, base + j, a.dtype, block_value(a, rank, peer, nranks, j));
    }
  }
}

size_t check(const CollArgs& a, int rank, int nranks, const std::byte* recv) {
  size_t wrong = 0;
  for (int peer = 0; peer < nranks; ++peer)
    wrong += count_wrong(recv, static_cast<size_t>(peer) * a.count, a.count, a.dtype,
                         [&](size_t j) { return block_value(a, peer, rank, nranks, j); });
  return wrong;
}

}  // namespace

const CollSpec kAlltoallSpec{
    .coll = Coll::Alltoall,
    .reduces = false,
    .rooted = false,
    .send_elements = [](size_t count, int n) { return count * static_cast<size_t>(n); },
    .recv_elements = [](size_t count, int n) { return count * static_cast<size_t>(n); },
    .algbw_elements = [](size_t count, int n) { return count * static_cast<size_t>(n); },
    .bus_factor = [](int n) { return (n - 1.0) / n; },
    .fill = fill,
    .check = check,
    .backends = kAllBackends,
    .device_validation = true,
};

}  // namespace cb
