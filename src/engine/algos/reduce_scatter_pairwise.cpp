// Reduce_scatter (block) by pairwise exchange: in step k every rank sends its input block
// for rank r+k straight to it and receives rank r-k's input block for itself, reducing
// each one as the next arrives (two receive buffers). p-1 steps, one peer each, every
// byte sent once and unreduced: for medium and large messages, and any rank count.
#include "engine/algos/algos.hpp"
#include "engine/algos/common.hpp"
#include "engine/algos/shm_common.hpp"

namespace cb::engine {
namespace {

void build(Schedule& s, const CollArgs& a, const Group& c) {
  const int n = c.size(), r = c.rank();
  const size_t block = a.count * width(a);
  const auto* in = static_cast<const std::byte*>(input_of(a));
  auto* out = static_cast<std::byte*>(a.recv.ptr);
  const auto in_block = [&](int b) { return in + block * static_cast<size_t>(b); };
  // The accumulator: out itself, or in place this rank's own block of the input (which
  // no peer needs), moved to the front at the end.
  std::byte* acc = a.in_place ? out + block * static_cast<size_t>(r) : out;
  s.copy(acc, in_block(r), block);
  std::byte* tmp[2] = {s.scratch(block), s.scratch(block)};
  for (int k = 1; k < n; ++k) {
    const int to = (r + k) % n, from = (r - k + n) % n;
    s.recv(tmp[k % 2], block, from);
    if (k > 1) s.reduce(acc, tmp[(k - 1) % 2], a.count, a.dtype, a.op);
    s.send(in_block(to), block, to);
    s.end_round();
  }
  if (n > 1) s.reduce(acc, tmp[(n - 1) % 2], a.count, a.dtype, a.op);
  s.copy(out, acc, block);  // in place, once every send from the input has completed
  s.end_round();
}

}  // namespace

const Algorithm kReduceScatterPairwise{
    .coll = Coll::ReduceScatter,
    .name = "pairwise",
    .summary = "p-1 steps, one peer each: send r+k its block, reduce r-k's as it arrives",
    .cannot_run = nullptr,
    .build = build,
};

}  // namespace cb::engine
