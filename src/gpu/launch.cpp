#include "gpu/launch.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>

#include "gpu/cuda_check.hpp"

namespace cb::gpu {

int multiprocessor_count() {
  constexpr int kMaxDevices = 64;
  static std::atomic<int> cached[kMaxDevices] = {};  // 0: not asked yet
  int device = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  const bool cacheable = device >= 0 && device < kMaxDevices;
  int n = cacheable ? cached[device].load(std::memory_order_relaxed) : 0;
  if (n == 0) {
    cuda_check(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device),
               "cudaDeviceGetAttribute(MultiProcessorCount)");
    if (cacheable) cached[device].store(n, std::memory_order_relaxed);
  }
  return n;
}

unsigned grid_blocks(size_t items, int blocks_per_sm) {
  const size_t wanted = (items + kThreadsPerBlock - 1) / kThreadsPerBlock;
  const size_t limit =
      static_cast<size_t>(std::max(1, blocks_per_sm)) * static_cast<size_t>(multiprocessor_count());
  return static_cast<unsigned>(std::clamp<size_t>(wanted, 1, limit));
}

}  // namespace cb::gpu
