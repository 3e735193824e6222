#include "engine/executor_cuda.hpp"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>

#include "core/errors.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/pointer_cache.hpp"
#include "gpu/reduce.hpp"

namespace cb::engine {
namespace {

void require_device_accessible(const void* ptr, const char* role) {
  if (gpu::pointer_cache().lookup(ptr).device_accessible()) return;
  char where[32];
  std::snprintf(where, sizeof where, "%p", ptr);
  throw RuntimeError(std::string("CudaExecutor: reduce ") + role + " " + where +
                     " is pageable host memory, which kernels cannot read; device schedules "
                     "need device or pinned scratch buffers");
}

}  // namespace

CudaExecutor::CudaExecutor(gpu::StreamHandle stream) {
  if (!stream) own_stream_.emplace();
  stream_ = stream ? stream : own_stream_->handle();
}

CudaExecutor::~CudaExecutor() {
  // Steps may still be running on a stream we do not own; their events must outlive them.
  if (!events_.empty()) cudaStreamSynchronize(static_cast<cudaStream_t>(stream_));
}

uint64_t CudaExecutor::acquire_event() {
  if (free_tokens_.empty()) {
    events_.emplace_back();
    return events_.size();
  }
  const uint64_t token = free_tokens_.back();
  free_tokens_.pop_back();
  return token;
}

void CudaExecutor::release_event(uint64_t token) {
  free_tokens_.push_back(token);
}

bool CudaExecutor::start(Step& s) {
  if (s.kind == StepKind::Reduce) {
    require_device_accessible(s.dst, "destination");
    require_device_accessible(s.src, "source");
    gpu::reduce(s.dst, s.src, s.count, s.dtype, s.op, stream_);
  } else if (s.kind == StepKind::Copy) {
    // cudaMemcpyDefault: unified addressing tells the direction (device, host, peer).
    gpu::cuda_check(cudaMemcpyAsync(s.dst, s.src, s.bytes, cudaMemcpyDefault,
                                    static_cast<cudaStream_t>(stream_)),
                    "cudaMemcpyAsync");
  } else {
    throw RuntimeError("CudaExecutor: only Reduce and Copy steps are local work");
  }
  s.token = acquire_event();
  events_[s.token - 1].record(stream_);
  return false;
}

bool CudaExecutor::test(Step& s) {
  if (s.token == 0) return true;  // completed and released earlier
  if (!events_[s.token - 1].query()) return false;
  release_event(s.token);
  s.token = 0;
  return true;
}

void CudaExecutor::synchronize() {
  gpu::cuda_check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream_)),
                  "cudaStreamSynchronize");
}

std::unique_ptr<Executor> make_cuda_executor(gpu::StreamHandle stream) {
  return std::make_unique<CudaExecutor>(stream);
}

}  // namespace cb::engine
