// Reduce_scatter (block) by ring: p-1 steps; in step k every rank receives from its left
// neighbour the partial reduction of block r-k-2, adds its own input of that block and
// passes it on, so that block r arrives with every other rank's contribution. Each rank
// sends and receives (p-1)/p of the input: bandwidth-optimal. Blocks are cut into segments
// (CB_RING_SEGMENT_BYTES) that flow one round each, so that reducing one segment overlaps
// receiving the next, with a bounded working buffer (one block and one segment).
#include <algorithm>

#include "engine/algos/algos.hpp"
#include "engine/algos/common.hpp"
#include "engine/algos/shm_common.hpp"
#include "engine/partition/blocks.hpp"
#include "engine/settings.hpp"

namespace cb::engine {
namespace {

void build(Schedule& s, const CollArgs& a, const Group& c) {
  const size_t w = width(a);
  const int n = c.size(), r = c.rank();
  const auto* in = static_cast<const std::byte*>(input_of(a));
  auto* out = static_cast<std::byte*>(a.recv.ptr);
  if (n == 1 || a.count == 0) {
    s.copy(out, in, a.count * w);
    return s.end_round();
  }
  const int left = (r + n - 1) % n, right = (r + 1) % n;
  const size_t per_seg = std::max<size_t>(1, engine_settings().ring_segment_bytes / w);
  const size_t segs = (a.count + per_seg - 1) / per_seg;
  const auto segment = [&](size_t j) { return block_of(a.count, segs, j); };
  const auto block_at = [&](int b) {  // element offset of block b (mod n) of the input
    return static_cast<size_t>((b % n + n) % n) * a.count;
  };
  // Unit t = (step k, segment j) receives into slot t % slots; a slot's partial result is
  // sent on `segs` units later, so slots = segs + 1 are never overwritten too early.
  const size_t slots = segs + 1;
  const size_t slot_bytes = segment(0).length * w;  // the largest segment
  std::byte* work = s.scratch(slots * slot_bytes);
  const auto slot = [&](size_t u) { return work + (u % slots) * slot_bytes; };

  size_t t = 0;
  size_t pending_at = 0, pending_len = 0;  // input range reduced into slot(t - 1) in unit t
  const auto reduce_pending = [&] {
    if (pending_len) s.reduce(slot(t - 1), in + pending_at * w, pending_len, a.dtype, a.op);
  };
  for (int k = 0; k < n - 1; ++k) {
    for (size_t j = 0; j < segs; ++j, ++t) {
      const Block g = segment(j);
      s.recv(slot(t), g.length * w, left);  // block r-k-2: arrives during the reduce
      reduce_pending();
      // Step 0 sends block r-1 of the raw input; later steps the partial received and
      // reduced `segs` units earlier.
      const std::byte* src = k == 0 ? in + (block_at(r - 1) + g.offset) * w : slot(t - segs);
      s.send(src, g.length * w, right);
      s.end_round();
      pending_at = block_at(r - k - 2) + g.offset;
      pending_len = g.length;
    }
  }
  reduce_pending();
  s.end_round();
  // The last `segs` units received block r; with this rank's own input added, it is done.
  for (size_t j = 0; j < segs; ++j) {
    const Block g = segment(j);
    s.copy(out + g.offset * w, slot(t - segs + j), g.length * w);
  }
  s.end_round();
}

}  // namespace

const Algorithm kReduceScatterRing{
    .coll = Coll::ReduceScatter,
    .name = "ring",
    .summary = "p-1 pipelined ring steps of one block; bandwidth-optimal, for large messages",
    .cannot_run = nullptr,
    .build = build,
};

}  // namespace cb::engine
