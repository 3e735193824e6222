// launch_compute (gpu/compute_kernel.hpp): a busy kernel of a given device time.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "core/errors.hpp"
#include "gpu/compute_kernel.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/device.hpp"
#include "gpu/launch.hpp"

namespace cb::gpu {
namespace {

__device__ float g_compute_sink;  // written only if the impossible happens: keeps the FMAs

__device__ __forceinline__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Each thread runs a dependent FMA chain (x -> 0.999 x + 0.5 stays finite, near 500) and
// reads the timer every 64 FMAs: a few hundred cycles, far below the microseconds asked.
__global__ void __launch_bounds__(kThreadsPerBlock) compute_for(uint64_t ns) {
  const uint64_t start = global_ns();
  float x = 1.0f + static_cast<float>(threadIdx.x) * 1e-3f;
  do {
#pragma unroll
    for (int k = 0; k < 64; ++k) x = fmaf(x, 0.999f, 0.5f);
  } while (global_ns() - start < ns);
  if (x == -1.0f) g_compute_sink = x;
}

}  // namespace

void launch_compute(double seconds, StreamHandle stream) {
  // Asked once: without a driver, the launch's own error would not say why.
  static const std::string why = unavailable_reason();
  if (!why.empty()) throw UsageError(why);
  const auto ns = static_cast<uint64_t>(seconds > 0 ? seconds * 1e9 : 0);
  compute_for<<<multiprocessor_count(), kThreadsPerBlock, 0, static_cast<cudaStream_t>(stream)>>>(
      ns);
  check_launch("compute_for");
}

}  // namespace cb::gpu
