// The binomial gather of one block per rank (gather, gatherv, and allgatherv's first
// half): each rank receives its children's subtrees, then sends its whole subtree to its
// parent in one message (two where it wraps around rank n - 1). Inner ranks keep their
// subtree in scratch in vrank order; the root receives straight into its buffer of all
// blocks and a leaf sends straight from its input, so small gathers copy nothing.
#pragma once

#include "engine/algos/rank_blocks.hpp"

namespace cb::engine {

inline void gather_tree(Schedule& s, const CollArgs& a, const Group& g, int root) {
  const RankBlocks b(a, g);
  const BinomialBlocks t(b, root);
  const int me = g.rank(), v = t.vrank(me), end = t.end_of(v);
  const std::byte* in = b.gather_input(a);
  if (v == 0) {
    auto* all = static_cast<std::byte*>(a.recv.ptr);
    s.copy(all + b.offset(me), in, b.bytes(me));  // dropped in place (same address)
    for (int c = 1; c < end; c <<= 1)
      t.pieces(c, t.end_of(c), [&](int first, int last) {
        s.recv(all + b.offset(t.real(first)), t.span(first, last), t.real(c));
      });
    s.end_round();
    return;
  }
  const int parent = t.real(v - (v & -v));
  if (end == v + 1) {  // a leaf: its block is its subtree
    s.send(in, b.bytes(me), parent);
    s.end_round();
    return;
  }
  std::byte* sub = s.scratch(t.span(v, end));
  s.copy(sub, in, b.bytes(me));
  for (int mask = 1; v + mask < end; mask <<= 1) {
    const int c = v + mask;
    t.pieces(c, t.end_of(c), [&](int first, int last) {
      s.recv(sub + t.span(v, first), t.span(first, last), t.real(c));
    });
  }
  s.end_round();
  t.pieces(v, end, [&](int first, int last) {
    s.send(sub + t.span(v, first), t.span(first, last), parent);
  });
  s.end_round();
}

}  // namespace cb::engine
