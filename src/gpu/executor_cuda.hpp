// The engine's executor for device buffers: Reduce steps run as CUDA kernels
// (gpu/reduce.hpp) and Copy steps as cudaMemcpyAsync, on one stream; each started step
// records an event, and test() asks that event. No algorithm changes: the engine picks
// this executor instead of HostExecutor when its buffers are Mem::Cuda.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "collective/engine/executor.hpp"
#include "gpu/stream.hpp"

namespace cb::gpu {

class CudaExecutor final : public engine::Executor {
 public:
  // Work goes to `stream` (not owned), or to a non-blocking stream of its own when null.
  explicit CudaExecutor(StreamHandle stream = nullptr);
  ~CudaExecutor() override;

  Mem mem() const override { return Mem::Cuda; }
  // Enqueues the step and returns false: completion is always asynchronous. Reduce
  // operands must be device-accessible (device, managed or pinned memory); a pageable
  // host operand throws RuntimeError naming it, since a kernel would fault on it.
  bool start(engine::Step& step) override;
  // True once the step's work has completed (its event has fired).
  bool test(engine::Step& step) override;

  StreamHandle stream() const { return stream_; }
  void synchronize();                                       // waits for everything enqueued so far
  size_t events_created() const { return events_.size(); }  // pool size, for tests

 private:
  // Step::token holds 1 + the index of the step's event in events_ while it runs.
  uint64_t acquire_event();
  void release_event(uint64_t token);

  std::optional<Stream> own_stream_;
  StreamHandle stream_ = nullptr;
  std::vector<Event> events_;
  std::vector<uint64_t> free_tokens_;
};

// The executor for device buffers; throws UsageError with gpu::unavailable_reason() in a
// build without CUDA, so engine code needs no #if.
std::unique_ptr<engine::Executor> make_cuda_executor(StreamHandle stream = nullptr);

}  // namespace cb::gpu
