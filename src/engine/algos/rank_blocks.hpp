// The blocks of gather(v), scatter(v) and allgatherv, in bytes: group rank r's block and
// its place in a buffer of all n blocks (count each, or the count matrix's per-rank
// counts for the v forms, core/coll_spec.hpp), so that a fixed form and its v form run
// through the same algorithm. In place (as MPI), a rank's own data is its block of recv:
// the input of gather(v) and allgatherv, the result of scatter(v).
#pragma once

#include <vector>

#include "core/coll_spec.hpp"
#include "engine/algos/common.hpp"

namespace cb::engine {

class RankBlocks {
 public:
  RankBlocks(const CollArgs& a, const Group& g) : n_(g.size()), me_(g.rank()) {
    const size_t w = width(a);
    bytes_.resize(static_cast<size_t>(n_));
    offset_.resize(static_cast<size_t>(n_));
    for (int r = 0; r < n_; ++r) {
      bytes_[static_cast<size_t>(r)] = rank_block_elements(a, g.global(r)) * w;
      offset_[static_cast<size_t>(r)] = rank_block_offset(a, g.global(r)) * w;
    }
    own_ = a.in_place ? static_cast<std::byte*>(a.recv.ptr) + offset(me_) : nullptr;
  }

  int ranks() const { return n_; }
  size_t bytes(int r) const { return bytes_[static_cast<size_t>(r)]; }
  size_t offset(int r) const { return offset_[static_cast<size_t>(r)]; }
  const std::vector<size_t>& all_bytes() const { return bytes_; }
  const std::vector<size_t>& all_offsets() const { return offset_; }

  // This rank's contribution to a gather: its block of recv in place, else send.
  const std::byte* gather_input(const CollArgs& a) const {
    return own_ ? own_ : static_cast<const std::byte*>(a.send.ptr);
  }
  // This rank's scatter result: its block of recv in place, else recv itself.
  std::byte* scatter_output(const CollArgs& a) const {
    return own_ ? own_ : static_cast<std::byte*>(a.recv.ptr);
  }
  // The root's n blocks for a scatter: recv in place, else send.
  static const std::byte* scatter_input(const CollArgs& a) {
    return static_cast<const std::byte*>(a.in_place ? a.recv.ptr : a.send.ptr);
  }

 private:
  int n_, me_;
  std::vector<size_t> bytes_, offset_;
  std::byte* own_;
};

// A binomial tree over ranks renumbered from the root (vrank v is rank (v + root) % n).
// The subtree of vrank v is the vranks [v, v + lowest set bit of v), clipped to n; the
// root's is all of them. Its blocks are contiguous in vrank order (how inner nodes keep
// them in scratch) but wrap around rank n - 1 in a buffer of all blocks, so a range is
// moved as at most two pieces, split where it wraps; both ends split alike.
class BinomialBlocks {
 public:
  BinomialBlocks(const RankBlocks& b, int root) : b_(b), n_(b.ranks()), root_(root) {}

  int real(int v) const { return (v + root_) % n_; }
  int vrank(int r) const { return (r - root_ + n_) % n_; }
  int end_of(int v) const {  // one past v's subtree
    if (v == 0) return n_;
    const int low = v & -v;
    return v + low < n_ ? v + low : n_;
  }
  // Bytes of vranks [first, last) in vrank order.
  size_t span(int first, int last) const {
    size_t s = 0;
    for (int v = first; v < last; ++v) s += b_.bytes(real(v));
    return s;
  }
  // Calls piece(first, last) for the parts of [first, last) that do not wrap.
  template <class F>
  void pieces(int first, int last, F&& piece) const {
    const int wrap = n_ - root_;  // vrank of rank 0
    if (first < wrap && wrap < last) {
      piece(first, wrap);
      piece(wrap, last);
    } else {
      piece(first, last);
    }
  }

 private:
  const RankBlocks& b_;
  int n_, root_;
};

}  // namespace cb::engine
