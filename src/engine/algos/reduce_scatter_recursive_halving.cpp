// Reduce_scatter (block) by recursive halving: in the round of distance m = p/2, p/4, ...,
// 1 every rank sends rank ^ m the half of its current range that holds rank ^ m's block
// and reduces the half holding its own with what it receives; log2(p) rounds, each rank
// sending (p-1)/p of the input in all. Power-of-two rank counts only (--algo all skips it
// otherwise). For small and medium messages.
#include "engine/algos/algos.hpp"
#include "engine/algos/common.hpp"
#include "engine/algos/shm_common.hpp"
#include "engine/partition/fold.hpp"

namespace cb::engine {
namespace {

std::string cannot_run(const CollArgs&, const Group& c) {
  if (!is_power_of_two(c.size()))
    return "recursive_halving needs a power-of-two rank count (" + std::to_string(c.size()) +
           " ranks)";
  return {};
}

void build(Schedule& s, const CollArgs& a, const Group& c) {
  const int n = c.size(), r = c.rank();
  const size_t block = a.count * width(a);
  const auto* in = static_cast<const std::byte*>(input_of(a));
  auto* out = static_cast<std::byte*>(a.recv.ptr);
  if (n == 1 || block == 0) {
    s.copy(out, in, block);
    return s.end_round();
  }
  // `cur` holds the partial results of blocks [lo, lo + 2m) (first the raw input, lo 0);
  // each round receives the partner's half for this rank's half into the other buffer.
  std::byte* buf[2] = {s.scratch(block * static_cast<size_t>(n / 2)),
                       s.scratch(block * static_cast<size_t>(n / 2))};
  const std::byte* cur = in;
  int lo = 0, which = 0;
  for (int m = n / 2; m >= 1; m /= 2) {
    const int partner = r ^ m;
    const int keep = r / m * m, give = partner / m * m;  // first block of each half
    std::byte* next = buf[which];
    const size_t half = block * static_cast<size_t>(m);
    s.recv(next, half, partner);
    s.send(cur + block * static_cast<size_t>(give - lo), half, partner);
    s.end_round();
    s.reduce(next, cur + block * static_cast<size_t>(keep - lo), a.count * static_cast<size_t>(m),
             a.dtype, a.op);
    cur = next;
    lo = keep;
    which ^= 1;
  }
  s.copy(out, cur, block);  // after every send from the input has completed (in place)
  s.end_round();
}

}  // namespace

const Algorithm kReduceScatterRecursiveHalving{
    .coll = Coll::ReduceScatter,
    .name = "recursive_halving",
    .summary = "log2(p) rounds exchanging halves of the current range; power-of-two ranks",
    .cannot_run = cannot_run,
    .build = build,
};

}  // namespace cb::engine
