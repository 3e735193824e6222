// Reduce by binomial tree over ranks renumbered from the root (vrank): a rank receives the
// partial results of its children (vrank + 1, + 2, + 4 ... while that bit is clear),
// reducing each while the next arrives (two receive buffers), then sends its result to its
// parent (vrank minus its lowest set bit). log2(p) steps of the whole vector: small messages.
#include "engine/algos/algos.hpp"
#include "engine/algos/reduce_common.hpp"

namespace cb::engine {
namespace {

void build(Schedule& s, const CollArgs& a, const Group& c) {
  const int n = c.size();
  const size_t bytes = a.count * width(a);
  const int vr = (c.rank() - a.root + n) % n;
  const auto real = [&](int v) { return (v + a.root) % n; };
  std::vector<int> children;
  int mask = 1;
  for (; mask < n && !(vr & mask); mask <<= 1)
    if (vr + mask < n) children.push_back(real(vr + mask));
  const int parent = vr ? real(vr - mask) : -1;

  if (children.empty()) {  // a leaf sends its input as it is
    if (parent >= 0)
      s.send(reduce_input(a), bytes, parent);
    else
      working_buffer(s, a, bytes);  // one rank: the result is its input
    return s.end_round();
  }
  std::byte* acc = reduce_accumulator(s, a, c.rank(), a.root);
  std::byte* tmp[2] = {s.scratch(bytes), s.scratch(bytes)};
  for (size_t i = 0; i < children.size(); ++i) {
    s.recv(tmp[i % 2], bytes, children[i]);
    if (i > 0) s.reduce(acc, tmp[(i - 1) % 2], a.count, a.dtype, a.op);
    s.end_round();
  }
  s.reduce(acc, tmp[(children.size() - 1) % 2], a.count, a.dtype, a.op);
  if (parent >= 0) s.send(acc, bytes, parent);
  s.end_round();
}

}  // namespace

const Algorithm kReduceBinomial{
    .coll = Coll::Reduce,
    .name = "binomial",
    .summary = "binomial tree to the root, reducing one child while the next arrives; small",
    .cannot_run = nullptr,
    .build = build,
};

}  // namespace cb::engine
