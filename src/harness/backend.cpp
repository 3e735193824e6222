#include "harness/backend.hpp"

#include <nlohmann/json.hpp>

#include "harness/memory.hpp"

namespace cb {

void Backend::describe(nlohmann::json&) const {}
Buf Backend::alloc(size_t bytes, Mem mem) {
  return alloc_buffer(bytes, mem);
}
void Backend::free(Buf& buf) {
  free_buffer(buf);
}

}  // namespace cb
