// The device executor in a build without CUDA: it exists, so engine code needs no #if,
// and asking for it says why it cannot work.
#include "core/errors.hpp"
#include "engine/executor_cuda.hpp"
#include "gpu/device.hpp"

namespace cb::engine {

std::unique_ptr<Executor> make_cuda_executor(gpu::StreamHandle) {
  throw UsageError(gpu::unavailable_reason());
}

}  // namespace cb::engine
