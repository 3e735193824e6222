// OMB's -D: the derived datatype a collective's blocks travel as. A block of `count`
// elements (a rank's block: the message size) is sent and received as ONE element of a
// derived type that picks some of them:
// - `cont`: all `count` (MPI_Type_contiguous),
// - `vect:STRIDE:BLOCKLEN`: count/STRIDE runs of BLOCKLEN elements, STRIDE apart
//   (MPI_Type_vector),
// - `indx:FILE`: the runs "DISPLACEMENT,BLOCKLEN" of a file, one a line, '#' comment lines
//   (MPI_Type_indexed),
// resized to the block's extent (count elements), so that block i of a gather or an
// alltoall stays at i * count elements, as with the plain type. The elements left out are
// not moved: the receiver's copies of them must stay as they were (what -c checks).
// OMB's differences: OMB neither resizes its types (its vector's blocks of an alltoall
// overlap) nor validates -D runs; its indexed type leaves out the file's last line.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cb {

struct LayoutSpec {
  enum class Kind { None, Contiguous, Vector, Indexed };
  Kind kind = Kind::None;
  size_t stride = 0, block = 0;                    // vect
  std::string file;                                // indx
  std::vector<std::pair<size_t, size_t>> indexed;  // indx: (displacement, length) runs
  bool on() const { return kind != Kind::None; }
  std::string str() const;  // as given to -D ("" when off)
};

// "cont", "vect:STRIDE:BLOCKLEN" (BLOCKLEN <= STRIDE: runs may not overlap, a received
// element must have one source) or "indx:FILE" (reads the file: runs in increasing,
// non-overlapping order). Throws UsageError naming -D otherwise.
LayoutSpec parse_layout(std::string_view text);

// The runs (offset, length) of a block of `count` elements that the layout moves, in
// increasing order; empty when none fits.
std::vector<std::pair<size_t, size_t>> layout_runs(const LayoutSpec& layout, size_t count);

// The elements of a `count`-element block a layout needs (an indexed layout's end; 1 for
// the others): a smaller block cannot hold it.
size_t layout_min_count(const LayoutSpec& layout);

// Elements moved per block.
size_t layout_moved(const LayoutSpec& layout, size_t count);

// The elements of `result` (a receive buffer of whole blocks of `count` elements of
// `width` bytes, after the layout's run) that are wrong: one the layout moves must equal
// `reference` (the plain type's result from the same inputs), one it leaves must still
// equal `initial` (the buffer before the run).
size_t layout_mismatches(const LayoutSpec& layout, size_t count, size_t width,
                         const std::vector<std::byte>& reference,
                         const std::vector<std::byte>& initial,
                         const std::vector<std::byte>& result);

}  // namespace cb
