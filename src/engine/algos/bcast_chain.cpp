// Bcast by pipelined chain: vrank i receives segments from i-1 and forwards each to i+1
// as soon as it has it, so after p-1 segment times every link is busy. Segment size:
// CB_BCAST_SEGMENT_BYTES (default 128 KiB).
#include "engine/algos/algos.hpp"
#include "engine/algos/common.hpp"
#include "engine/partition/blocks.hpp"
#include "engine/settings.hpp"

namespace cb::engine {
namespace {

void build(Schedule& s, const CollArgs& a, const Group& c) {
  const int n = c.size();
  const size_t w = width(a);
  auto* data = static_cast<std::byte*>(a.recv.ptr);
  const int vr = (c.rank() - a.root + n) % n;
  const int prev = (c.rank() + n - 1) % n, next = (c.rank() + 1) % n;
  const bool receives = vr > 0, forwards = vr < n - 1;
  const size_t per_seg = std::max<size_t>(1, engine_settings().bcast_segment_bytes / w);
  const size_t segs = std::max<size_t>(1, (a.count + per_seg - 1) / per_seg);
  // Round j receives segment j and forwards segment j - 1 (complete since round j - 1).
  for (size_t j = 0; j <= segs; ++j) {
    if (receives && j < segs) {
      const Block b = block_of(a.count, segs, j);
      s.recv(data + b.offset * w, b.length * w, prev);
    }
    const size_t out = receives ? j - 1 : j;  // the root sends segment j in round j
    if (forwards && (receives ? j >= 1 : j < segs)) {
      const Block b = block_of(a.count, segs, out);
      s.send(data + b.offset * w, b.length * w, next);
    }
    s.end_round();
  }
}

}  // namespace

const Algorithm kBcastChain{
    .coll = Coll::Bcast,
    .name = "chain",
    .summary = "pipelined chain in segments; every link busy, for large messages",
    .cannot_run = nullptr,
    .build = build,
};

}  // namespace cb::engine
