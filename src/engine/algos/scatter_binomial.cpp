// Scatter and scatterv by binomial tree over ranks renumbered from the root: each rank
// receives its subtree's blocks from its parent in one message (two where the subtree
// wraps around rank n - 1), then sends each child its subtree, largest first, and keeps
// its own block. Inner ranks hold their subtree in scratch in vrank order; the root sends
// straight from its buffer of all blocks and a leaf receives straight into its result.
// The v form takes each rank's block from the count matrix: both are one algorithm.
#include "engine/algos/algos.hpp"
#include "engine/algos/rank_blocks.hpp"

namespace cb::engine {
namespace {

void build(Schedule& s, const CollArgs& a, const Group& g) {
  const RankBlocks b(a, g);
  const BinomialBlocks t(b, a.root);
  const int n = g.size(), me = g.rank(), v = t.vrank(me), end = t.end_of(v);
  std::byte* out = b.scatter_output(a);
  // The highest child first: it heads the largest subtree, the longest path.
  int top = 1;
  while (top < end - v) top <<= 1;
  if (v == 0) {
    const std::byte* all = RankBlocks::scatter_input(a);
    for (int c = top >> 1; c > 0; c >>= 1)
      if (c < n)
        t.pieces(c, t.end_of(c), [&](int first, int last) {
          s.send(all + b.offset(t.real(first)), t.span(first, last), t.real(c));
        });
    s.copy(out, all + b.offset(me), b.bytes(me));  // dropped in place (same address)
    s.end_round();
    return;
  }
  const int parent = t.real(v - (v & -v));
  if (end == v + 1) {  // a leaf: its subtree is its block
    s.recv(out, b.bytes(me), parent);
    s.end_round();
    return;
  }
  std::byte* sub = s.scratch(t.span(v, end));
  t.pieces(v, end, [&](int first, int last) {
    s.recv(sub + t.span(v, first), t.span(first, last), parent);
  });
  s.end_round();
  for (int mask = top >> 1; mask > 0; mask >>= 1) {
    const int c = v + mask;
    if (c < end)
      t.pieces(c, t.end_of(c), [&](int first, int last) {
        s.send(sub + t.span(v, first), t.span(first, last), t.real(c));
      });
  }
  s.copy(out, sub, b.bytes(me));
  s.end_round();
}

constexpr std::string_view kSummary =
    "binomial tree from the root, each subtree in one message; log2(p) steps";

}  // namespace

const Algorithm kScatterBinomial{
    .coll = Coll::Scatter,
    .name = "binomial",
    .summary = kSummary,
    .cannot_run = nullptr,
    .build = build,
    .rerunnable = true,
};

const Algorithm kScattervBinomial{
    .coll = Coll::Scatterv,
    .name = "binomial",
    .summary = kSummary,
    .cannot_run = nullptr,
    .build = build,
    .rerunnable = true,
};

}  // namespace cb::engine
