// Reduce by Rabenseifner's algorithm (as MPICH's reduce_scatter_gather): reduce-scatter by
// recursive halving, then a binomial gather of the reduced blocks to the root. About 2n
// bytes per rank in 2 log2(p) rounds: medium and large messages. Ranks are renumbered from
// the root; with p not a power of two, each odd vrank below 2(p - pof2) hands its vector
// to the even vrank below it and sits out, so that the root (vrank 0) always takes part.
#include "engine/algos/algos.hpp"
#include "engine/algos/reduce_common.hpp"
#include "engine/partition/blocks.hpp"

namespace cb::engine {
namespace {

void build(Schedule& s, const CollArgs& a, const Group& c) {
  const int n = c.size();
  const size_t w = width(a), bytes = a.count * w;
  const int vr = (c.rank() - a.root + n) % n;
  const auto real = [&](int v) { return (v + a.root) % n; };
  int pof2 = 1;
  while (pof2 * 2 <= n) pof2 *= 2;
  const int rem = n - pof2;
  if (vr < 2 * rem && vr % 2 == 1) {  // sits out: its vector goes to vrank - 1
    s.send(reduce_input(a), bytes, real(vr - 1));
    return s.end_round();
  }
  std::byte* acc = reduce_accumulator(s, a, c.rank(), a.root);
  if (n == 1 || bytes == 0) return s.end_round();
  std::byte* tmp = s.scratch(bytes);
  if (vr < 2 * rem) {
    s.recv(tmp, bytes, real(vr + 1));
    s.end_round();
    s.reduce(acc, tmp, a.count, a.dtype, a.op);
  }
  const auto me = static_cast<size_t>(vr < 2 * rem ? vr / 2 : vr - rem);
  const auto peer = [&](size_t nr) {  // new rank -> communicator rank
    const int v =
        nr < static_cast<size_t>(rem) ? static_cast<int>(nr) * 2 : static_cast<int>(nr) + rem;
    return real(v);
  };
  const auto parts = static_cast<size_t>(pof2);
  // Recursive halving: block i ends up reduced on new rank i.
  for (size_t m = parts / 2; m >= 1; m /= 2) {
    const size_t partner = me ^ m;
    const Block keep = block_range(a.count, parts, me / m * m, m);
    const Block give = block_range(a.count, parts, partner / m * m, m);
    s.recv(tmp + keep.offset * w, keep.length * w, peer(partner));
    s.send(acc + give.offset * w, give.length * w, peer(partner));
    s.end_round();
    s.reduce(acc + keep.offset * w, tmp + keep.offset * w, keep.length, a.dtype, a.op);
  }
  // Binomial gather to new rank 0 (the root): at distance m, a rank holding blocks
  // [me, me + m) passes them down to me - m.
  for (size_t m = 1; m < parts; m *= 2) {
    if (me % (2 * m) == m) {
      const Block mine = block_range(a.count, parts, me, m);
      s.send(acc + mine.offset * w, mine.length * w, peer(me - m));
      break;
    }
    const Block theirs = block_range(a.count, parts, me + m, m);
    s.recv(acc + theirs.offset * w, theirs.length * w, peer(me + m));
    s.end_round();
  }
  s.end_round();
}

}  // namespace

const Algorithm kReduceRabenseifner{
    .coll = Coll::Reduce,
    .name = "rabenseifner",
    .summary = "reduce-scatter by recursive halving + binomial gather to the root",
    .cannot_run = nullptr,
    .build = build,
};

}  // namespace cb::engine
