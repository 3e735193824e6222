// CUDA runtime error handling shared by the CUDA sources of cb_gpu and the NCCL backend.
// Internal: includes the CUDA runtime header, so plain C++ headers must not include it.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

namespace cb::gpu {

// "invalid argument (cudaErrorInvalidValue)": the message and the name, so that a report
// can be searched for either.
std::string cuda_error_string(cudaError_t e);

// Throws RuntimeError "<what>: <cuda_error_string>" unless e is cudaSuccess.
void cuda_check(cudaError_t e, const char* what);

// cuda_check(cudaGetLastError()) after a kernel launch: a launch reports its errors
// (bad configuration, no kernel image for this GPU) only there.
void check_launch(const char* kernel);

}  // namespace cb::gpu
