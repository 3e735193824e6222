// Bcast by scatter + ring allgather (van de Geijn): a binomial tree scatters p blocks so
// that vrank i holds block i, then p-1 ring steps gather every block everywhere. About 2n
// bytes per rank instead of log2(p) x n: for large messages.
#include "engine/algos/algos.hpp"
#include "engine/algos/common.hpp"
#include "engine/partition/blocks.hpp"

namespace cb::engine {
namespace {

void build(Schedule& s, const CollArgs& a, const Group& c) {
  const int n = c.size();
  const size_t w = width(a);
  auto* data = static_cast<std::byte*>(a.recv.ptr);
  const int vr = (c.rank() - a.root + n) % n;
  const auto real = [&](int v) { return ((v % n + n) % n + a.root) % n; };
  const auto parts = static_cast<size_t>(n);
  // Blocks [first, first + len) clipped to the p blocks, in bytes.
  const auto blocks = [&](int first, int len) {
    const int last = std::min(first + len, n);
    return block_range(a.count, parts, static_cast<size_t>(first),
                       static_cast<size_t>(last - first));
  };

  // Scatter: a subtree rooted at vrank v with lowest set bit m owns blocks [v, v + m).
  int mask = 1;
  for (; mask < n; mask <<= 1) {
    if (vr & mask) {
      const Block mine = blocks(vr, mask);
      s.recv(data + mine.offset * w, mine.length * w, real(vr - mask));
      s.end_round();
      break;
    }
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (vr + mask >= n) continue;
    const Block sub = blocks(vr + mask, mask);
    s.send(data + sub.offset * w, sub.length * w, real(vr + mask));
  }
  s.end_round();

  // Ring allgather over vranks: step k passes block vr - k right, receives vr - k - 1.
  for (int k = 0; k < n - 1; ++k) {
    const Block out = block_of(a.count, parts, static_cast<size_t>(((vr - k) % n + n) % n));
    const Block in = block_of(a.count, parts, static_cast<size_t>(((vr - k - 1) % n + n) % n));
    s.recv(data + in.offset * w, in.length * w, real(vr - 1));
    s.send(data + out.offset * w, out.length * w, real(vr + 1));
    s.end_round();
  }
}

}  // namespace

const Algorithm kBcastScatterAllgather{
    .coll = Coll::Bcast,
    .name = "scatter_allgather",
    .summary = "binomial scatter + ring allgather (van de Geijn); for large messages",
    .cannot_run = nullptr,
    .build = build,
};

}  // namespace cb::engine
