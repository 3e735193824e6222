// Device buffers over a host transport (MPI point to point, shared memory): the pattern a
// skilled user writes around a non-CUDA-aware MPI, done once here. A send copies its
// message to a pinned bounce buffer on a stream and posts it when the copy has finished;
// a receive lands in a bounce buffer and is copied to the device after it completes.
// Every step of a round starts at once and algorithms send in segments (the ring's 256
// KiB), so one segment's copies overlap other segments' transfers: a pipeline.
// Steps on host memory pass straight through. (Not run on a GPU yet: see docs/gpu.md.)
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "engine/transport.hpp"
#include "gpu/stream.hpp"

namespace cb::engine {

class StagingTransport final : public Transport {
 public:
  // `inner(peer)`: the transport that moves host bytes to that peer.
  explicit StagingTransport(std::function<Transport&(int)> inner);
  ~StagingTransport() override;
  const char* name() const override { return "device staging"; }
  void post(Step& step, int tag) override;
  bool test(Step& step) override;

 private:
  enum class Phase { CopyIn, Transfer, CopyOut, Done };
  struct Staged {
    Step host;          // the same transfer on the bounce buffer
    std::byte* bounce;  // pinned
    size_t capacity;
    gpu::Event copied;
    Phase phase;
    int tag;
  };
  std::byte* take_bounce(size_t bytes, size_t& capacity);
  void give_back(std::byte* bounce, size_t capacity);

  std::function<Transport&(int)> inner_;
  gpu::Stream stream_;
  std::unordered_map<Step*, std::unique_ptr<Staged>> staged_;
  std::multimap<size_t, std::byte*> free_;  // pinned bounce buffers by capacity, reused
  std::vector<std::pair<std::byte*, size_t>> all_;
};

}  // namespace cb::engine
