// CUDA device discovery and memory, behind an interface that exists in every build:
// without CUDA (or without a driver/GPU) each call explains why devices are unusable.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace cb::gpu {

bool built_with_cuda();

// Empty when a GPU is usable; otherwise one sentence naming the cause (no CUDA in this
// build, no driver, no device), including the CUDA error string.
std::string unavailable_reason();

int device_count();  // 0 when unavailable

// Picks device local_rank % count (after CUDA_VISIBLE_DEVICES) for this process.
int select_device(int local_rank);

void* device_alloc(size_t bytes);  // throws RuntimeError with the CUDA error string
void device_free(void* ptr);
void copy(void* dst, const void* src, size_t bytes);  // any direction, synchronous
// Page-locked host memory (cudaMallocHost): copies to and from it run asynchronously.
void* pinned_alloc(size_t bytes);
void pinned_free(void* ptr);
// cudaMemcpyAsync(..., cudaMemcpyDefault) on `stream` (a cudaStream_t, see stream.hpp).
void copy_async(void* dst, const void* src, size_t bytes, void* stream);
void device_memset(void* ptr, int value, size_t bytes);
void synchronize();
// The current device's free and total memory (cudaMemGetInfo); false without a usable GPU.
bool device_memory(size_t& free_bytes, size_t& total_bytes);

// {"runtime": "13.0", "driver": "...", "devices": [...]} or {"unavailable": "why"}
void describe(nlohmann::json& out);

}  // namespace cb::gpu
