// Allreduce by ring: reduce-scatter around the ring (p-1 steps), then allgather around it
// (p-1 steps), each step one block of n/p elements. Every rank sends 2(p-1)/p x n bytes:
// bandwidth-optimal. Blocks are cut into segments that flow one round each, so that
// reducing segment j overlaps receiving segment j+1 (pipelining), with the reduced data
// still in cache when it is sent on.
#include "engine/algos/algos.hpp"
#include "engine/algos/common.hpp"
#include "engine/partition/blocks.hpp"
#include "engine/settings.hpp"

namespace cb::engine {
namespace {

// Segment size: CB_RING_SEGMENT_BYTES, default 256 KiB (a fraction of the 1 MiB L2).
size_t segment_bytes() {
  return engine_settings().ring_segment_bytes;
}

std::string cannot_run(const CollArgs& a, const Group& c) {
  if (a.count != 0 && a.count < static_cast<size_t>(c.size()))
    return "ring needs at least one element per rank (count " + std::to_string(a.count) + " < " +
           std::to_string(c.size()) + " ranks)";
  return {};
}

void build(Schedule& s, const CollArgs& a, const Group& c) {
  const size_t w = width(a);
  std::byte* data = working_buffer(s, a, a.count * w);
  const int n = c.size(), r = c.rank();
  if (n == 1 || a.count == 0) return s.end_round();
  const int left = (r + n - 1) % n, right = (r + 1) % n;
  const auto parts = static_cast<size_t>(n);
  // Every block is cut into the same number of segments, so both ends of a transfer agree.
  const size_t per_seg = std::max<size_t>(1, segment_bytes() / w);
  const size_t segs = (block_of(a.count, parts, 0).length + per_seg - 1) / per_seg;
  const auto segment = [&](int block, size_t j) {
    const Block b = block_of(a.count, parts, static_cast<size_t>((block % n + n) % n));
    const Block part = block_of(b.length, segs, j);
    return Block{b.offset + part.offset, part.length};
  };
  std::byte* tmp[2] = {s.scratch(per_seg * w), s.scratch(per_seg * w)};

  // Reduce-scatter. Unit t = (step k, segment j) receives segment j of block r-k-1 into
  // tmp[t % 2] and sends segment j of block r-k, which was reduced `segs` units earlier
  // (or, with one segment, by the reduction placed just before the send).
  size_t t = 0;
  Block pending{0, 0};  // received by the previous unit, reduced in this one
  const auto reduce_pending = [&] {
    if (pending.length)
      s.reduce(data + pending.offset * w, tmp[(t - 1) % 2], pending.length, a.dtype, a.op);
  };
  for (int k = 0; k < n - 1; ++k) {
    for (size_t j = 0; j < segs; ++j, ++t) {
      const Block in = segment(r - k - 1, j), out = segment(r - k, j);
      s.recv(tmp[t % 2], in.length * w, left);  // posted first: arrives during the reduce
      reduce_pending();
      s.send(data + out.offset * w, out.length * w, right);
      s.end_round();
      pending = in;
    }
  }
  reduce_pending();
  // Allgather: block r+1 is now fully reduced here; pass the blocks on around the ring.
  for (int k = 0; k < n - 1; ++k) {
    for (size_t j = 0; j < segs; ++j) {
      const Block in = segment(r - k, j), out = segment(r + 1 - k, j);
      s.recv(data + in.offset * w, in.length * w, left);
      s.send(data + out.offset * w, out.length * w, right);
      s.end_round();
    }
  }
}

}  // namespace

const Algorithm kAllreduceRing{
    .coll = Coll::Allreduce,
    .name = "ring",
    .summary = "pipelined ring reduce-scatter + allgather; bandwidth-optimal, for large messages",
    .cannot_run = cannot_run,
    .build = build,
};

}  // namespace cb::engine
