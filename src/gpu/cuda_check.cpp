#include "gpu/cuda_check.hpp"

#include "core/errors.hpp"

namespace cb::gpu {

std::string cuda_error_string(cudaError_t e) {
  return std::string(cudaGetErrorString(e)) + " (" + cudaGetErrorName(e) + ")";
}

void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw RuntimeError(std::string(what) + ": " + cuda_error_string(e));
}

void check_launch(const char* kernel) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    throw RuntimeError(std::string("launching ") + kernel + ": " + cuda_error_string(e));
}

}  // namespace cb::gpu
