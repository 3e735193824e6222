// CUDA IPC between processes of one node: a rank exports one of its device allocations,
// its peers map it into their address space once and then read and write it with kernels
// and copies like their own memory. The engine's IPC algorithms (engine/ipc/) build on
// it; NVIDIA's simpleIPC sample and vLLM's custom allreduce do the same. In a build
// without CUDA every call throws UsageError with the reason.
#pragma once

#include <array>
#include <cstddef>

#include "core/types.hpp"
#include "gpu/stream.hpp"

namespace cb::gpu {

// cudaIpcMemHandle_t's 64 bytes, so that plain C++ code can send it to its peers.
struct IpcHandle {
  std::array<unsigned char, 64> bytes{};
};

// The handle of the allocation that starts at `base` (cudaIpcGetMemHandle; base must be
// what cudaMalloc returned).
IpcHandle ipc_export(void* base);
// Maps a peer's allocation (cudaIpcOpenMemHandle, peer access enabled lazily). It fails in
// the process that exported the handle (CUDA: "invalid device context"), so a rank never
// opens its own.
void* ipc_open(const IpcHandle& handle);
void ipc_close(void* mapped) noexcept;  // cudaIpcCloseMemHandle; errors ignored (teardown)

// The most inputs reduce_many takes: ranks of a node in an IPC collective.
inline constexpr int kMaxIpcInputs = 16;

// out[i] = in[0][i] op in[1][i] op ... op in[n-1][i], folded in input order, so every rank
// that reduces the same inputs gets the same bits. Sum and prod of half and bfloat16
// accumulate in float and round once at the end (as NCCL and vLLM do); other types and
// max/min fold pairwise with reduce()'s semantics. All pointers must be naturally aligned
// for dt; 16-byte aligned ones go 16 bytes per load. 1 <= n <= kMaxIpcInputs.
void reduce_many(void* out, const void* const* in, int n, size_t count, Dtype dt, Op op,
                 StreamHandle stream);

}  // namespace cb::gpu
