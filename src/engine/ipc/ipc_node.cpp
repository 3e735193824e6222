#include "engine/ipc/ipc_node.hpp"

#include <algorithm>
#include <cstring>
#include <exception>

#include "core/errors.hpp"
#include "gpu/device.hpp"
#include "gpu/ipc.hpp"

namespace cb::engine {

IpcNode::IpcNode(int rank, int size, const Allgather& allgather) : rank_(rank) {
  base_.assign(static_cast<size_t>(size), nullptr);

  // Step 1: allocate and export. Step 2: map the peers'. Each step ends with every rank
  // learning every rank's outcome, so that none goes on alone and all say the same.
  struct Outcome {
    gpu::IpcHandle handle;
    char reason[256];  // empty: this rank succeeded
  };
  Outcome mine{};
  std::vector<Outcome> all(static_cast<size_t>(size));
  auto agree = [&](const char* step) {
    allgather(&mine, all.data(), sizeof mine);
    for (int r = 0; r < size; ++r)
      if (all[static_cast<size_t>(r)].reason[0]) {
        why_ = std::string("CUDA IPC (") + step + ") failed on rank " + std::to_string(r) + ": " +
               all[static_cast<size_t>(r)].reason;
        return false;
      }
    return true;
  };
  auto note = [&](const std::exception& e) {
    std::strncpy(mine.reason, e.what(), sizeof mine.reason - 1);
  };

  try {
    if (const std::string why = gpu::unavailable_reason(); !why.empty()) throw UsageError(why);
    own_ = gpu::device_alloc(2 * kChunkBytes);
    mine.handle = gpu::ipc_export(own_);
    stream_ = std::make_unique<gpu::Stream>();
  } catch (const std::exception& e) {
    note(e);
  }
  if (!agree("allocating and exporting the scratch")) return;
  try {
    for (int r = 0; r < size; ++r)
      base_[static_cast<size_t>(r)] = static_cast<std::byte*>(
          r == rank_ ? own_ : gpu::ipc_open(all[static_cast<size_t>(r)].handle));
  } catch (const std::exception& e) {
    note(e);
  }
  agree("mapping the peers' scratch");
}

IpcNode::~IpcNode() {
  for (int r = 0; r < size(); ++r)
    if (r != rank_) gpu::ipc_close(base_[static_cast<size_t>(r)]);
  stream_.reset();
  if (own_) {
    try {
      gpu::device_free(own_);
    } catch (...) {  // at exit the CUDA runtime may be gone already
    }
  }
}

}  // namespace cb::engine
