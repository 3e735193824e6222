#include <cstring>

#include "engine/executor.hpp"
#include "engine/reduce_host.hpp"

namespace cb::engine {

bool HostExecutor::start(Step& s) {
  if (s.kind == StepKind::Reduce)
    reduce_host(s.dst, s.src, s.count, s.dtype, s.op);
  else
    std::memcpy(s.dst, s.src, s.bytes);
  return true;
}

}  // namespace cb::engine
