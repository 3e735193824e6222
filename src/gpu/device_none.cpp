// The device interface of a build without CUDA: every use says so.
#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "gpu/device.hpp"

namespace cb::gpu {
namespace {
constexpr const char* kWhy =
    "no usable GPU: collbench was built without CUDA (COLLBENCH_CUDA=OFF "
    "or no CUDA toolkit found at configure time)";
[[noreturn]] void refuse() {
  throw UsageError(kWhy);
}
}  // namespace

bool built_with_cuda() {
  return false;
}
std::string unavailable_reason() {
  return kWhy;
}
int device_count() {
  return 0;
}
bool device_memory(size_t&, size_t&) {
  return false;
}
int select_device(int) {
  refuse();
}
void* device_alloc(size_t) {
  refuse();
}
void device_free(void*) {}
void copy(void*, const void*, size_t) {
  refuse();
}
void device_memset(void*, int, size_t) {
  refuse();
}
void* pinned_alloc(size_t) {
  refuse();
}
void pinned_free(void*) {}
void copy_async(void*, const void*, size_t, void*) {
  refuse();
}
void synchronize() {}
void describe(nlohmann::json& out) {
  out["unavailable"] = kWhy;
}

}  // namespace cb::gpu
