// What the CUDA IPC algorithms share: whether they can run (device buffers, every rank on
// this node with the engine's shared memory for the host-side synchronisation, at most
// gpu::kMaxIpcInputs ranks, and an IpcNode that every rank could set up).
#pragma once

#include <cstdint>
#include <string>

#include "core/args.hpp"
#include "engine/comm.hpp"
#include "engine/group.hpp"
#include "engine/ipc/ipc_collectives.hpp"
#include "engine/ipc/ipc_node.hpp"
#include "gpu/ipc.hpp"

namespace cb::engine {

inline std::string needs_ipc(const CollArgs& a, const Group& g, std::string_view algo) {
  const std::string name(algo);
  if (a.recv.mem != Mem::Cuda || (!a.in_place && a.send.ptr && a.send.mem != Mem::Cuda))
    return name + " is for device buffers (-d cuda)";
  const Comm* comm = g.comm();
  if (!comm || g.size() != comm->size() || comm->node_count() != 1)
    return name + " needs every rank of the communicator on one node";
  if (!g.shm() || g.shm()->local_size() != g.size())
    return name + " synchronises through the engine's shared memory (" + comm->shm_status() + ")";
  if (g.size() > gpu::kMaxIpcInputs)
    return name + " runs on at most " + std::to_string(gpu::kMaxIpcInputs) + " ranks";
  // Every rank reaches this point for the same call (the arguments above agree), so the
  // collective set-up of the first call is safe here.
  const IpcNode& node = comm->ipc();
  return node.usable() ? std::string() : name + ": " + node.why_not();
}

// The reductions read elements with typed loads: buffers must be naturally aligned.
inline std::string needs_aligned(const CollArgs& a, std::string_view algo) {
  const size_t width = dtype_size(a.dtype);
  const auto misaligned = [width](const void* p) {
    return p && reinterpret_cast<uintptr_t>(p) % width != 0;
  };
  if (misaligned(a.recv.ptr) || (!a.in_place && misaligned(a.send.ptr)))
    return std::string(algo) + " needs buffers aligned to the element size";
  return {};
}

}  // namespace cb::engine
