// The engine's executor for device buffers: Reduce steps run as CUDA kernels
// (gpu/reduce.hpp) and Copy steps as cudaMemcpyAsync, on one stream; each started step
// records an event, and test() asks that event. No algorithm changes: the engine picks
// this executor instead of HostExecutor when its buffers are Mem::Cuda.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "engine/executor.hpp"
#include "gpu/stream.hpp"

namespace cb::engine {

class CudaExecutor final : public Executor {
 public:
  // Work goes to `stream` (not owned), or to a non-blocking stream of its own when null.
  explicit CudaExecutor(gpu::StreamHandle stream = nullptr);
  ~CudaExecutor() override;

  Mem mem() const override { return Mem::Cuda; }
  // Enqueues the step and returns false: completion is always asynchronous. Reduce
  // operands must be device-accessible (device, managed or pinned memory); a pageable
  // host operand throws RuntimeError naming it, since a kernel would fault on it.
  bool start(Step& step) override;
  // True once the step's work has completed (its event has fired).
  bool test(Step& step) override;

  gpu::StreamHandle stream() const { return stream_; }
  void synchronize();                                       // waits for everything enqueued so far
  size_t events_created() const { return events_.size(); }  // pool size, for tests

 private:
  // Step::token holds 1 + the index of the step's event in events_ while it runs.
  uint64_t acquire_event();
  void release_event(uint64_t token);

  std::optional<gpu::Stream> own_stream_;
  gpu::StreamHandle stream_ = nullptr;
  std::vector<gpu::Event> events_;
  std::vector<uint64_t> free_tokens_;
};

// The executor for device buffers; throws UsageError with gpu::unavailable_reason() in a
// build without CUDA, so engine code needs no #if.
std::unique_ptr<Executor> make_cuda_executor(gpu::StreamHandle stream = nullptr);

}  // namespace cb::engine
