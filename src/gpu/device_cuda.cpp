#include <cuda_runtime_api.h>

#include <string>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/device.hpp"
#include "gpu/pointer_cache.hpp"

namespace cb::gpu {
namespace {

std::string version_string(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

}  // namespace

bool built_with_cuda() {
  return true;
}

std::string unavailable_reason() {
  int count = 0;  // cudaGetDeviceCount leaves it untouched on failure
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice)
    return "no usable GPU: cudaGetDeviceCount failed: " + cuda_error_string(e) +
           " (no NVIDIA driver or GPU on this machine)";
  if (e != cudaSuccess) return "no usable GPU: cudaGetDeviceCount failed: " + cuda_error_string(e);
  if (count == 0) return "no usable GPU: cudaGetDeviceCount found 0 devices";
  return {};
}

int device_count() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

bool device_memory(size_t& free_bytes, size_t& total_bytes) {
  return unavailable_reason().empty() && cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess;
}

int select_device(int local_rank) {
  const int n = device_count();
  if (n == 0) throw UsageError(unavailable_reason());
  const int dev = local_rank % n;
  cuda_check(cudaSetDevice(dev), "cudaSetDevice");
  return dev;
}

void* device_alloc(size_t bytes) {
  void* p = nullptr;
  const size_t size = bytes ? bytes : 1;
  cuda_check(cudaMalloc(&p, size), "cudaMalloc");
  int device = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  pointer_cache().insert({MemoryKind::Device, device, p, size});  // known: no driver query
  return p;
}

void device_free(void* ptr) {
  if (!ptr) return;
  pointer_cache().erase(ptr);  // before the address can be reused
  cudaFree(ptr);
}

// cudaMemcpy from pageable host memory returns once the data sits in the driver's staging
// buffer, before the DMA into the device has finished, and it runs on the legacy default
// stream, which work on collbench's non-blocking streams does not wait for. So a kernel
// launched right after it could read the old contents (seen on the first GPU run: the
// reduction tests read inputs that had not landed). Waiting for the legacy stream makes
// "synchronous" true in every direction.
void copy(void* dst, const void* src, size_t bytes) {
  if (!bytes) return;
  cuda_check(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault), "cudaMemcpy");
  cuda_check(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize");
}

void* pinned_alloc(size_t bytes) {
  void* p = nullptr;
  cuda_check(cudaMallocHost(&p, bytes ? bytes : 1), "cudaMallocHost");
  return p;
}

void pinned_free(void* ptr) {
  if (ptr) cudaFreeHost(ptr);
}

void copy_async(void* dst, const void* src, size_t bytes, void* stream) {
  if (bytes)
    cuda_check(
        cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, static_cast<cudaStream_t>(stream)),
        "cudaMemcpyAsync");
}

// Synchronous for the same reason as copy(): cudaMemset of device memory is asynchronous
// and on the legacy stream.
void device_memset(void* ptr, int value, size_t bytes) {
  if (!bytes) return;
  cuda_check(cudaMemset(ptr, value, bytes), "cudaMemset");
  cuda_check(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize");
}

void synchronize() {
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

void describe(nlohmann::json& out) {
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  out["runtime"] = version_string(runtime);
  out["driver"] = driver ? version_string(driver) : "none";
  const std::string why = unavailable_reason();
  if (!why.empty()) {
    out["unavailable"] = why;
    return;
  }
  nlohmann::json devices = nlohmann::json::array();
  for (int d = 0; d < device_count(); ++d) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) continue;
    char bus[32] = {};
    cudaDeviceGetPCIBusId(bus, sizeof bus, d);
    devices.push_back(
        {{"index", d},
         {"name", prop.name},
         {"pci_bus_id", bus},
         {"memory_bytes", prop.totalGlobalMem},
         {"compute_capability", std::to_string(prop.major) + "." + std::to_string(prop.minor)},
         {"multiprocessors", prop.multiProcessorCount}});
  }
  out["devices"] = devices;
}

}  // namespace cb::gpu
