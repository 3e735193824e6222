#include "gpu/ipc.hpp"

#include <cuda_runtime_api.h>

#include <cstring>

#include "gpu/cuda_check.hpp"

namespace cb::gpu {

static_assert(sizeof(cudaIpcMemHandle_t) == sizeof(IpcHandle::bytes));

IpcHandle ipc_export(void* base) {
  cudaIpcMemHandle_t h{};
  cuda_check(cudaIpcGetMemHandle(&h, base), "cudaIpcGetMemHandle");
  IpcHandle out;
  std::memcpy(out.bytes.data(), &h, sizeof h);
  return out;
}

void* ipc_open(const IpcHandle& handle) {
  cudaIpcMemHandle_t h{};
  std::memcpy(&h, handle.bytes.data(), sizeof h);
  void* p = nullptr;
  cuda_check(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess), "cudaIpcOpenMemHandle");
  return p;
}

void ipc_close(void* mapped) noexcept {
  if (mapped) cudaIpcCloseMemHandle(mapped);
}

}  // namespace cb::gpu
