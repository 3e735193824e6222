// Allreduce by recursive doubling: log2(p) rounds, each exchanging the whole vector with
// the rank whose number differs in one bit and reducing. Latency-optimal; moves
// log2(p) x n bytes per rank, so it suits small messages.
#include "engine/algos/algos.hpp"
#include "engine/algos/fold_steps.hpp"

namespace cb::engine {
namespace {

void build(Schedule& s, const CollArgs& a, const Group& c) {
  const size_t bytes = a.count * width(a);
  std::byte* data = working_buffer(s, a, bytes);
  if (c.size() == 1 || bytes == 0) return s.end_round();
  std::byte* tmp = s.scratch(bytes);
  const PowerOfTwoFold f(c.rank(), c.size());
  if (!fold_in(s, f, c.rank(), a, data, tmp)) return;
  for (int mask = 1; mask < f.pof2; mask <<= 1) {
    const int peer = f.real_rank(f.newrank ^ mask);
    // The previous round's reduction (added before) finishes before tmp is reused.
    s.recv(tmp, bytes, peer);
    s.send(data, bytes, peer);
    s.end_round();
    s.reduce(data, tmp, a.count, a.dtype, a.op);
  }
  fold_out(s, f, c.rank(), a, data);
}

}  // namespace

const Algorithm kAllreduceRecursiveDoubling{
    .coll = Coll::Allreduce,
    .name = "recursive_doubling",
    .summary = "log2(p) whole-vector exchanges; latency-optimal, for small messages",
    .cannot_run = nullptr,
    .build = build,
};

}  // namespace cb::engine
