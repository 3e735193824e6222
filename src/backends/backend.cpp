#include "backends/backend.hpp"

#include "core/errors.hpp"
#include "gpu/memory.hpp"

namespace cb {

Buf Backend::alloc(size_t bytes, Mem mem) {
  return alloc_buffer(bytes, mem);
}

void Backend::free(Buf& buf) {
  free_buffer(buf);
}

std::string Backend::unsupported(const CollArgs& args) const {
  if (std::string why = coll_unsupported(args.coll, kind_); !why.empty()) return why;
  return refuses(args);
}

gpu::Graph Backend::capture(const std::function<void()>&) {
  throw UsageError("-G (CUDA graph launch): the " + name() +
                   " backend's calls are not stream operations, so there is nothing to capture");
}

}  // namespace cb
