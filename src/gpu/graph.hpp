// CUDA graphs (nccl-tests' -G) as an RAII object behind a plain C++ header, as stream.hpp:
// the work some calls enqueue on a stream is captured once (cudaStreamBeginCapture ...
// cudaStreamEndCapture), instantiated and uploaded to the device (cudaGraphInstantiate,
// cudaGraphUpload), then launched as often as wanted, each launch one stream operation
// that runs the whole captured sequence: no host launch cost per captured call. Without a
// usable GPU, or in a build without CUDA, the constructor throws UsageError with
// gpu::unavailable_reason().
#pragma once

#include <cstddef>
#include <functional>

#include "gpu/stream.hpp"

namespace cb::gpu {

class Graph {
 public:
  Graph() = default;  // empty: nothing to launch
  // Captures what `enqueue` puts on `stream` (thread-local capture mode, as nccl-tests:
  // libraries such as NCCL may allocate from other threads meanwhile), then instantiates
  // and uploads the graph. If `enqueue` throws, the capture is ended, discarded, and the
  // exception goes on. A capture CUDA invalidated throws RuntimeError. One that recorded
  // nothing gives a graph whose launches do nothing and nodes() == 0: the caller decides
  // whether that is legitimate or a sign that the calls went to another stream.
  Graph(StreamHandle stream, const std::function<void()>& enqueue);
  ~Graph();
  Graph(Graph&& other) noexcept;
  Graph& operator=(Graph&& other) noexcept;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  bool empty() const { return exec_ == nullptr; }
  size_t nodes() const { return nodes_; }  // nodes captured (kernels, copies); 0: nothing
  // Enqueues one run of the whole graph on `stream` (cudaGraphLaunch); returns at once.
  void launch(StreamHandle stream) const;

 private:
  void reset() noexcept;

  void* graph_ = nullptr;  // cudaGraph_t
  void* exec_ = nullptr;   // cudaGraphExec_t
  size_t nodes_ = 0;
};

}  // namespace cb::gpu
