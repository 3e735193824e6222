#include "gpu/graph.hpp"

#include <string>
#include <utility>

#include "core/errors.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/device.hpp"

namespace cb::gpu {
namespace {

cudaStream_t as_stream(StreamHandle s) {
  return static_cast<cudaStream_t>(s);
}

}  // namespace

Graph::Graph(StreamHandle stream, const std::function<void()>& enqueue) {
  if (const std::string why = unavailable_reason(); !why.empty()) throw UsageError(why);
  const cudaStream_t s = as_stream(stream);
  cuda_check(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  cudaGraph_t graph = nullptr;
  try {
    enqueue();
  } catch (...) {
    // Out of capture mode whatever happened, so that the stream stays usable; the partial
    // graph is of no use.
    if (cudaStreamEndCapture(s, &graph) == cudaSuccess && graph) cudaGraphDestroy(graph);
    throw;
  }
  cuda_check(cudaStreamEndCapture(s, &graph),
             "cudaStreamEndCapture (the capture was invalidated by a call not allowed while "
             "capturing)");
  graph_ = graph;
  try {
    size_t count = 0;
    cuda_check(cudaGraphGetNodes(graph, nullptr, &count), "cudaGraphGetNodes");
    nodes_ = count;
    // A capture may legitimately record nothing (NCCL enqueues nothing for a bcast or an
    // in-place allreduce on one rank), but an empty graph cannot be instantiated: one empty node
    // makes it launchable. Callers that expect work check nodes().
    if (count == 0) {
      cudaGraphNode_t node = nullptr;
      cuda_check(cudaGraphAddEmptyNode(&node, graph, nullptr, 0), "cudaGraphAddEmptyNode");
    }
    cudaGraphExec_t exec = nullptr;
    cuda_check(cudaGraphInstantiateWithFlags(&exec, graph, 0), "cudaGraphInstantiateWithFlags");
    exec_ = exec;
    // Now rather than at the first launch, which would otherwise be the slow one.
    cuda_check(cudaGraphUpload(exec, s), "cudaGraphUpload");
  } catch (...) {  // no destructor runs for a throwing constructor
    reset();
    throw;
  }
}

Graph::~Graph() {
  reset();
}

Graph::Graph(Graph&& other) noexcept
    : graph_(std::exchange(other.graph_, nullptr)),
      exec_(std::exchange(other.exec_, nullptr)),
      nodes_(std::exchange(other.nodes_, 0)) {}

Graph& Graph::operator=(Graph&& other) noexcept {
  if (this != &other) {
    reset();
    graph_ = std::exchange(other.graph_, nullptr);
    exec_ = std::exchange(other.exec_, nullptr);
    nodes_ = std::exchange(other.nodes_, 0);
  }
  return *this;
}

void Graph::reset() noexcept {  // no throw: called from the destructor
  if (exec_) cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec_));
  if (graph_) cudaGraphDestroy(static_cast<cudaGraph_t>(graph_));
  exec_ = graph_ = nullptr;
  nodes_ = 0;
}

void Graph::launch(StreamHandle stream) const {
  if (!exec_) throw RuntimeError("launching an empty CUDA graph (nothing was captured)");
  cuda_check(cudaGraphLaunch(static_cast<cudaGraphExec_t>(exec_), as_stream(stream)),
             "cudaGraphLaunch");
}

}  // namespace cb::gpu
