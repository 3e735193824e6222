// Splitting a vector into near-equal contiguous blocks (the first count % parts blocks get
// one element more), so that any count works with any number of ranks.
#pragma once

#include <cstddef>

namespace cb::engine {

struct Block {
  size_t offset;  // elements
  size_t length;
};

inline Block block_of(size_t count, size_t parts, size_t index) {
  const size_t base = count / parts, extra = count % parts;
  return {index * base + (index < extra ? index : extra), base + (index < extra ? 1 : 0)};
}

// Blocks [first, first + n) as one contiguous range.
inline Block block_range(size_t count, size_t parts, size_t first, size_t n) {
  const Block a = block_of(count, parts, first);
  const Block b = block_of(count, parts, first + n - 1);
  return {a.offset, b.offset + b.length - a.offset};
}

}  // namespace cb::engine
