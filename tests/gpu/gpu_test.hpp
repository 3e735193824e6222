// Shared by the GPU tests: a fixture that skips (with the reason) where no GPU is usable,
// and device buffers with host copies.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "gpu/device.hpp"

namespace cb::gpu::test {

// Every test that touches a device derives from this: without a GPU it is reported as
// Skipped with the cause (no driver, no device, no CUDA in this build), never as passed.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = unavailable_reason();
    if (!why.empty()) GTEST_SKIP() << why;
    select_device(0);
  }
};

// Device memory freed on scope exit, with byte-vector transfers.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes), ptr_(device_alloc(bytes)) {}
  ~DeviceBuffer() { device_free(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  std::byte* get() const { return static_cast<std::byte*>(ptr_); }
  size_t bytes() const { return bytes_; }
  void upload(const std::vector<std::byte>& data, size_t offset = 0) const {
    gpu::copy(get() + offset, data.data(), data.size());
  }
  std::vector<std::byte> download(size_t offset, size_t length) const {
    std::vector<std::byte> out(length);
    gpu::copy(out.data(), get() + offset, length);
    return out;
  }

 private:
  size_t bytes_;
  void* ptr_;
};

}  // namespace cb::gpu::test
