#include "gpu/pointer_cache.hpp"

#include <cuda.h>  // driver types only: the driver is reached through the runtime
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include "gpu/cuda_check.hpp"

namespace cb::gpu {
namespace {

// The driver's cuPointerGetAttribute, found through the runtime so that nothing links
// libcuda directly (the stub would be picked up and fail at start-up without a driver).
PFN_cuPointerGetAttribute_v4000 driver_pointer_attribute() {
  static const PFN_cuPointerGetAttribute_v4000 fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuPointerGetAttribute", &f, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      f = nullptr;
    return reinterpret_cast<PFN_cuPointerGetAttribute_v4000>(f);
  }();
  return fn;
}

// Start and size of the allocation holding ptr, or {ptr, 1} when the driver cannot say.
void allocation_range(const void* ptr, PointerInfo& info) {
  info.base = ptr;
  info.size = 1;
  const auto fn = driver_pointer_attribute();
  if (!fn) return;
  CUdeviceptr start = 0;
  size_t size = 0;
  const auto p = reinterpret_cast<CUdeviceptr>(ptr);
  if (fn(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p) == CUDA_SUCCESS &&
      fn(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p) == CUDA_SUCCESS && size > 0) {
    info.base = reinterpret_cast<const void*>(start);
    info.size = size;
  }
}

}  // namespace

PointerInfo PointerCache::query_driver(const void* ptr) {
  PointerInfo info;
  cudaPointerAttributes attr{};
  const cudaError_t e = cudaPointerGetAttributes(&attr, ptr);
  if (e == cudaErrorInvalidValue) {  // older drivers: not a CUDA pointer at all
    cudaGetLastError();              // clear it, so that it is not reported by the next call
    return info;
  }
  cuda_check(e, "cudaPointerGetAttributes");
  switch (attr.type) {
    case cudaMemoryTypeUnregistered:
      return info;
    case cudaMemoryTypeHost:
      info.kind = MemoryKind::Pinned;
      break;
    case cudaMemoryTypeDevice:
      info.kind = MemoryKind::Device;
      info.device = attr.device;
      break;
    case cudaMemoryTypeManaged:
      info.kind = MemoryKind::Managed;
      break;
  }
  allocation_range(ptr, info);
  return info;
}

PointerInfo PointerCache::lookup(const void* ptr) {
  const auto p = reinterpret_cast<uintptr_t>(ptr);
  {
    std::lock_guard lock(mu_);
    auto it = by_base_.upper_bound(p);  // first allocation starting after p
    if (it != by_base_.begin()) {
      --it;
      if (p - it->first < it->second.size) return it->second;
    }
    ++queries_;
  }
  // The driver is asked without the lock held; a concurrent lookup of the same
  // allocation at worst asks twice and inserts the same entry.
  const PointerInfo info = query_driver(ptr);
  if (info.kind != MemoryKind::Pageable) insert(info);
  return info;
}

void PointerCache::insert(const PointerInfo& info) {
  std::lock_guard lock(mu_);
  by_base_[reinterpret_cast<uintptr_t>(info.base)] = info;
}

void PointerCache::erase(const void* base) {
  std::lock_guard lock(mu_);
  by_base_.erase(reinterpret_cast<uintptr_t>(base));
}

void PointerCache::clear() {
  std::lock_guard lock(mu_);
  by_base_.clear();
}

size_t PointerCache::driver_queries() const {
  std::lock_guard lock(mu_);
  return queries_;
}

size_t PointerCache::entries() const {
  std::lock_guard lock(mu_);
  return by_base_.size();
}

PointerCache& pointer_cache() {
  static PointerCache cache;
  return cache;
}

}  // namespace cb::gpu
