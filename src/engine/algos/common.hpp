// Small pieces every algorithm uses.
#pragma once

#include "core/args.hpp"
#include "engine/schedule.hpp"

namespace cb::engine {

// The buffer a reduction or gather works in: recv, with send copied in first unless the
// operation is in place. The copy is local work at the start of the first round.
inline std::byte* working_buffer(Schedule& s, const CollArgs& a, size_t bytes) {
  auto* data = static_cast<std::byte*>(a.recv.ptr);
  if (!a.in_place) s.copy(data, a.send.ptr, bytes);
  return data;
}

inline size_t width(const CollArgs& a) {
  return dtype_size(a.dtype);
}

}  // namespace cb::engine
