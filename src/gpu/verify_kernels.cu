// Validation kernels: the host validation's fill and check (see gpu/validate.hpp) run on
// the device, one grid-stride pass over the elements. Not timed, so written for clarity:
// one element per thread per pass and the value formulas of verify_values.hpp.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/errors.hpp"
#include "core/verify_values.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/launch.hpp"
#include "gpu/validate.hpp"

namespace cb::gpu {
namespace {

constexpr int kBlocksPerSm = 2048 / kThreadsPerBlock;  // a full GPU, once

// Element k of a buffer of `width`-byte elements; natural alignment is not assumed.
__device__ void store_bits(unsigned char* base, size_t k, size_t width, uint64_t bits) {
  unsigned char* p = base + k * width;
  if (reinterpret_cast<uintptr_t>(p) % width == 0) {
    switch (width) {
      case 1:
        *p = static_cast<uint8_t>(bits);
        return;
      case 2:
        *reinterpret_cast<uint16_t*>(p) = static_cast<uint16_t>(bits);
        return;
      case 4:
        *reinterpret_cast<uint32_t*>(p) = static_cast<uint32_t>(bits);
        return;
      default:
        *reinterpret_cast<uint64_t*>(p) = bits;
        return;
    }
  }
  for (size_t i = 0; i < width; ++i) p[i] = static_cast<uint8_t>(bits >> (8 * i));
}

__device__ uint64_t load_bits(const unsigned char* base, size_t k, size_t width) {
  const unsigned char* p = base + k * width;
  if (reinterpret_cast<uintptr_t>(p) % width == 0) {
    switch (width) {
      case 1:
        return *p;
      case 2:
        return *reinterpret_cast<const uint16_t*>(p);
      case 4:
        return *reinterpret_cast<const uint32_t*>(p);
      default:
        return *reinterpret_cast<const uint64_t*>(p);
    }
  }
  uint64_t bits = 0;
  for (size_t i = 0; i < width; ++i) bits |= static_cast<uint64_t>(p[i]) << (8 * i);
  return bits;
}

// CollSpec::fill(): n_in input elements, and n_out poisoned output elements in `poisoned`
// (null when the input is recv).
__global__ void fill_collective_kernel(CollData d, unsigned char* input, size_t n_in,
                                       unsigned char* poisoned, size_t n_out) {
  const size_t width = values::element_size(d.dtype);
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  const size_t n = n_in > n_out ? n_in : n_out;
  for (size_t k = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; k < n; k += stride) {
    if (poisoned && k < n_out)
      store_bits(poisoned, k, width, values::poison(d.dtype, values::expected_at(d, k)));
    if (k < n_in) store_bits(input, k, width, values::input_bits_at(d, k));
  }
}

// Adds each warp's count to *total with one atomic.
__device__ void add_warp_count(unsigned long long mine, unsigned long long* total) {
  for (int offset = 16; offset > 0; offset /= 2)
    mine += __shfl_down_sync(0xFFFFFFFFu, mine, offset);
  if (threadIdx.x % 32 == 0 && mine) atomicAdd(total, mine);
}

__global__ void check_collective_kernel(CollData d, const unsigned char* recv, size_t n,
                                        unsigned long long* wrong) {
  const size_t width = values::element_size(d.dtype);
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  unsigned long long mine = 0;
  for (size_t k = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; k < n; k += stride)
    mine += values::wrong_at(d, k, load_bits(recv, k, width));
  add_warp_count(mine, wrong);
}

__global__ void fill_pattern_kernel(unsigned char* buf, size_t bytes, uint32_t seed, uint8_t flip) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < bytes;
       i += stride)
    buf[i] = values::pattern_byte(seed, i) ^ flip;
}

__global__ void count_pattern_kernel(const unsigned char* buf, size_t bytes, uint32_t seed,
                                     unsigned long long* wrong) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  unsigned long long mine = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < bytes;
       i += stride)
    mine += buf[i] != values::pattern_byte(seed, i);
  add_warp_count(mine, wrong);
}

void check_coll(const CollData& d) {
  if (d.coll != Coll::Allreduce && d.coll != Coll::Bcast && d.coll != Coll::Alltoall &&
      d.coll != Coll::Allgather && d.coll != Coll::ReduceScatter && d.coll != Coll::Reduce)
    throw RuntimeError("device validation: no data layout for collective " +
                       std::string(to_string(d.coll)));
}

// A device counter around `launch`, read back once the stream has run it.
template <typename Launch>
size_t count_on_device(cudaStream_t stream, Launch launch) {
  unsigned long long* counter = nullptr;
  cuda_check(cudaMallocAsync(reinterpret_cast<void**>(&counter), sizeof *counter, stream),
             "cudaMallocAsync");
  cuda_check(cudaMemsetAsync(counter, 0, sizeof *counter, stream), "cudaMemsetAsync");
  launch(counter);
  unsigned long long total = 0;
  cuda_check(cudaMemcpyAsync(&total, counter, sizeof total, cudaMemcpyDeviceToHost, stream),
             "cudaMemcpyAsync");
  cuda_check(cudaFreeAsync(counter, stream), "cudaFreeAsync");
  cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return static_cast<size_t>(total);
}

}  // namespace

void fill_collective(const CollData& d, void* send, void* recv, StreamHandle stream) {
  check_coll(d);
  const size_t n_in = values::input_elements(d), n_out = values::elements(d);
  const size_t n = n_in > n_out ? n_in : n_out;
  if (n == 0) return;
  const bool into_recv = values::input_is_recv(d);
  auto* input = static_cast<unsigned char*>(into_recv ? recv : send);
  auto* poisoned = into_recv ? nullptr : static_cast<unsigned char*>(recv);
  fill_collective_kernel<<<grid_blocks(n, kBlocksPerSm), kThreadsPerBlock, 0,
                           static_cast<cudaStream_t>(stream)>>>(d, input, n_in, poisoned, n_out);
  check_launch("fill_collective_kernel");
}

size_t check_collective(const CollData& d, const void* recv, StreamHandle stream) {
  check_coll(d);
  const size_t n = values::elements(d);
  if (n == 0 || !values::result_checked(d)) return 0;
  const auto s = static_cast<cudaStream_t>(stream);
  return count_on_device(s, [&](unsigned long long* wrong) {
    check_collective_kernel<<<grid_blocks(n, kBlocksPerSm), kThreadsPerBlock, 0, s>>>(
        d, static_cast<const unsigned char*>(recv), n, wrong);
    check_launch("check_collective_kernel");
  });
}

void fill_pattern(void* buf, size_t bytes, uint32_t seed, bool poison, StreamHandle stream) {
  if (bytes == 0) return;
  fill_pattern_kernel<<<grid_blocks(bytes, kBlocksPerSm), kThreadsPerBlock, 0,
                        static_cast<cudaStream_t>(stream)>>>(static_cast<unsigned char*>(buf),
                                                             bytes, seed, poison ? 0xFF : 0);
  check_launch("fill_pattern_kernel");
}

size_t count_pattern_errors(const void* buf, size_t bytes, uint32_t seed, StreamHandle stream) {
  if (bytes == 0) return 0;
  const auto s = static_cast<cudaStream_t>(stream);
  return count_on_device(s, [&](unsigned long long* wrong) {
    count_pattern_kernel<<<grid_blocks(bytes, kBlocksPerSm), kThreadsPerBlock, 0, s>>>(
        static_cast<const unsigned char*>(buf), bytes, seed, wrong);
    check_launch("count_pattern_kernel");
  });
}

}  // namespace cb::gpu
