// Bcast by binomial tree over ranks renumbered from the root (vrank): receive the whole
// message from the parent (vrank minus its lowest set bit), then send it to the children,
// largest subtree first. log2(p) steps; for small messages.
#include "engine/algos/algos.hpp"
#include "engine/algos/common.hpp"

namespace cb::engine {
namespace {

void build(Schedule& s, const CollArgs& a, const Group& c) {
  const int n = c.size();
  const size_t bytes = a.count * width(a);
  auto* data = static_cast<std::byte*>(a.recv.ptr);
  const int vr = (c.rank() - a.root + n) % n;
  const auto real = [&](int v) { return (v + a.root) % n; };
  int mask = 1;
  for (; mask < n; mask <<= 1) {
    if (vr & mask) {
      s.recv(data, bytes, real(vr - mask));
      s.end_round();
      break;
    }
  }
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (vr + mask < n) s.send(data, bytes, real(vr + mask));
  s.end_round();
}

}  // namespace

const Algorithm kBcastBinomial{
    .coll = Coll::Bcast,
    .name = "binomial",
    .summary = "binomial tree from the root; log2(p) steps, for small messages",
    .cannot_run = nullptr,
    .build = build,
};

}  // namespace cb::engine
