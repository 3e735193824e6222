// Allreduce by Rabenseifner's algorithm: reduce-scatter by recursive halving, then
// allgather by recursive doubling. log2(p) rounds each way and about 2n bytes per rank:
// bandwidth-efficient at few rounds, for medium and large messages.
#include "engine/algos/algos.hpp"
#include "engine/algos/fold_steps.hpp"
#include "engine/partition/blocks.hpp"

namespace cb::engine {
namespace {

std::string cannot_run(const CollArgs& a, const Group& c) {
  const PowerOfTwoFold f(0, c.size());
  if (a.count != 0 && a.count < static_cast<size_t>(f.pof2))
    return "rabenseifner needs at least one element per rank of the power-of-two group (count " +
           std::to_string(a.count) + " < " + std::to_string(f.pof2) + ")";
  return {};
}

void build(Schedule& s, const CollArgs& a, const Group& c) {
  const size_t w = width(a);
  std::byte* data = working_buffer(s, a, a.count * w);
  if (c.size() == 1 || a.count == 0) return s.end_round();
  std::byte* tmp = s.scratch(a.count * w);
  const PowerOfTwoFold f(c.rank(), c.size());
  if (!fold_in(s, f, c.rank(), a, data, tmp)) return;

  const auto parts = static_cast<size_t>(f.pof2);
  const auto me = static_cast<size_t>(f.newrank);
  // Block i ends up reduced on new rank i. With halving distance m, a rank keeps the m
  // blocks of its aligned group and sends its partner the partner's group.
  for (size_t m = parts / 2; m >= 1; m /= 2) {
    const size_t partner = me ^ m;
    const Block keep = block_range(a.count, parts, me / m * m, m);
    const Block give = block_range(a.count, parts, partner / m * m, m);
    s.recv(tmp + keep.offset * w, keep.length * w, f.real_rank(static_cast<int>(partner)));
    s.send(data + give.offset * w, give.length * w, f.real_rank(static_cast<int>(partner)));
    s.end_round();
    s.reduce(data + keep.offset * w, tmp + keep.offset * w, keep.length, a.dtype, a.op);
  }
  // Allgather by recursive doubling: swap groups of m reduced blocks, doubling m.
  for (size_t m = 1; m < parts; m *= 2) {
    const size_t partner = me ^ m;
    const Block mine = block_range(a.count, parts, me / m * m, m);
    const Block theirs = block_range(a.count, parts, partner / m * m, m);
    s.recv(data + theirs.offset * w, theirs.length * w, f.real_rank(static_cast<int>(partner)));
    s.send(data + mine.offset * w, mine.length * w, f.real_rank(static_cast<int>(partner)));
    s.end_round();
  }
  fold_out(s, f, c.rank(), a, data);
}

}  // namespace

const Algorithm kAllreduceRabenseifner{
    .coll = Coll::Allreduce,
    .name = "rabenseifner",
    .summary = "reduce-scatter by recursive halving + allgather by recursive doubling",
    .cannot_run = cannot_run,
    .build = build,
};

}  // namespace cb::engine
