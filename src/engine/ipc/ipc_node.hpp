// The device memory the ranks of one node share through CUDA IPC: every rank allocates a
// scratch area on its GPU, exports it once, and maps every peer's (gpu/ipc.hpp). The IPC
// collectives (ipc_collectives.hpp) copy a rank's input into its own scratch and read the
// peers' scratch with kernels and copies: user buffers are never exported, so a call needs
// no handle exchange (cudaIpcOpenMemHandle maps memory through the driver, far dearer than
// a collective's copy) and any allocator's memory works, for one device-to-device copy of
// the input at the device's memory bandwidth.
//
// Made once per engine communicator, at its first device collective on one node
// (Comm::ipc()), collectively: every rank agrees whether it worked.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpu/stream.hpp"

namespace cb::engine {

class IpcNode {
 public:
  // Bytes of one chunk: a collective moves its data through the scratch this much at a
  // time. Each rank's scratch holds two chunks (input and result areas).
  static constexpr size_t kChunkBytes = size_t{32} << 20;

  // Every rank contributes `bytes` at `mine`; all ranks' contributions land in rank order
  // at `all` (the communicator's allgather: MPI stays in Comm, which passes it).
  using Allgather = std::function<void(const void* mine, void* all, size_t bytes)>;

  // Collective over the communicator behind `allgather` (all ranks on one node). Never
  // throws for a CUDA failure: the ranks agree, and usable() is false on all of them with
  // the lowest failing rank's reason.
  IpcNode(int rank, int size, const Allgather& allgather);
  ~IpcNode();
  IpcNode(const IpcNode&) = delete;
  IpcNode& operator=(const IpcNode&) = delete;

  bool usable() const { return why_.empty(); }
  const std::string& why_not() const { return why_; }

  // Rank r's input area (kChunkBytes) and result area (kChunkBytes): this rank's own, or
  // its mapping of a peer's.
  std::byte* input(int r) const { return base_[static_cast<size_t>(r)]; }
  std::byte* result(int r) const { return base_[static_cast<size_t>(r)] + kChunkBytes; }
  int size() const { return static_cast<int>(base_.size()); }
  // The stream the IPC collectives' kernels and copies go to (one per communicator: its
  // collectives run one at a time, Schedule::exclusive).
  gpu::StreamHandle stream() const { return stream_ ? stream_->handle() : nullptr; }

 private:
  std::string why_;
  int rank_ = 0;
  void* own_ = nullptr;           // cudaMalloc'ed scratch of this rank
  std::vector<std::byte*> base_;  // every rank's scratch, as this process sees it
  std::unique_ptr<gpu::Stream> stream_;
};

}  // namespace cb::engine
