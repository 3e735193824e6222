// Alltoallv by pairwise exchange: own block copied, then in step k every rank sends its
// block for rank + k and receives the one from rank - k (sizes from the count matrix; an
// empty block is no message on either side). p-1 steps, one peer each.
#include "core/vcounts.hpp"
#include "engine/algos/algos.hpp"
#include "engine/algos/common.hpp"

namespace cb::engine {
namespace {

void build(Schedule& s, const CollArgs& a, const Group& c) {
  const int n = c.size(), r = c.rank();
  const CountMatrix& m = *a.counts;
  const size_t w = width(a);
  const auto* in = static_cast<const std::byte*>(a.send.ptr);
  auto* out = static_cast<std::byte*>(a.recv.ptr);
  const int me = c.global(r);
  const auto in_block = [&](int to) { return in + m.send_offset(me, to) * w; };
  const auto out_block = [&](int from) { return out + m.recv_offset(me, from) * w; };
  s.copy(out_block(me), in_block(me), m.count(me, me) * w);
  for (int k = 1; k < n; ++k) {
    const int to = (r + k) % n, from = (r - k + n) % n;
    const int gto = c.global(to), gfrom = c.global(from);
    s.recv(out_block(gfrom), m.count(gfrom, me) * w, from);
    s.send(in_block(gto), m.count(me, gto) * w, to);
    s.end_round();
  }
  s.end_round();
}

std::string cannot_run(const CollArgs& a, const Group&) {
  if (!a.counts) return "alltoallv needs its count matrix";
  if (a.in_place) return "alltoallv has no in-place form";
  return {};
}

}  // namespace

const Algorithm kAlltoallvPairwise{
    .coll = Coll::Alltoallv,
    .name = "pairwise",
    .summary = "p-1 steps, one peer each, blocks sized by the count matrix",
    .cannot_run = cannot_run,
    .build = build,
};

}  // namespace cb::engine
