// Where a pointer's memory lives (pageable host, pinned host, device, managed), which
// device owns it and the allocation it belongs to, asked of the driver once per
// allocation and then answered from a table, so that driver queries stay off the hot
// path. The allocation base is what CUDA IPC handles (cudaIpcGetMemHandle) need.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

namespace cb::gpu {

enum class MemoryKind : uint8_t {
  Pageable,  // ordinary host memory: kernels cannot touch it
  Pinned,    // page-locked host memory (cudaMallocHost, cudaHostRegister): kernels can
  Device,    // cudaMalloc, cudaMallocAsync, ncclMemAlloc
  Managed,   // cudaMallocManaged
};

struct PointerInfo {
  MemoryKind kind = MemoryKind::Pageable;
  int device = -1;             // the owning device (Device); -1 when not device memory
  const void* base = nullptr;  // allocation start; nullptr for pageable memory
  size_t size = 0;             // allocation size in bytes; 0 when unknown
  bool device_accessible() const { return kind != MemoryKind::Pageable; }
};

class PointerCache {
 public:
  // Thread-safe. A pointer inside a known allocation is answered from the table; any
  // other pointer costs one cudaPointerGetAttributes (plus the driver's range query).
  // Pageable host memory is never cached: it has no allocation range to key on, and it
  // may be registered later.
  PointerInfo lookup(const void* ptr);

  // Allocations collbench makes itself are entered when they are made (no query at all)
  // and must be removed before they are freed: CUDA reuses addresses.
  void insert(const PointerInfo& info);
  void erase(const void* base);
  void clear();

  size_t driver_queries() const;  // how often lookup() asked the driver (for tests)
  size_t entries() const;

 private:
  PointerInfo query_driver(const void* ptr);

  mutable std::mutex mu_;
  std::map<uintptr_t, PointerInfo> by_base_;  // allocation start -> what it is
  size_t queries_ = 0;
};

// The process-wide cache; device_alloc()/device_free() keep it up to date.
PointerCache& pointer_cache();

}  // namespace cb::gpu
