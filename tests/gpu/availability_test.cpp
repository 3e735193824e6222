// gpu::unavailable_reason() is what every skipped GPU test and every refused -d cuda run
// prints, so it must be consistent with what the machine has. Runs everywhere.
#include <gtest/gtest.h>

#include <string>

#include "core/errors.hpp"
#include "engine/executor_cuda.hpp"
#include "gpu/device.hpp"

namespace cb::gpu {
namespace {

using engine::make_cuda_executor;

TEST(Availability, ReasonMatchesDeviceCount) {
  const std::string why = unavailable_reason();
  if (device_count() > 0) {
    EXPECT_TRUE(why.empty()) << why;
  } else {
    EXPECT_EQ(why.rfind("no usable GPU: ", 0), 0u) << why;
  }
}

TEST(Availability, SelectingADeviceWithoutOneSaysWhy) {
  const std::string why = unavailable_reason();
  if (why.empty()) GTEST_SKIP() << "a GPU is usable here";
  try {
    select_device(0);
    FAIL() << "select_device succeeded without a usable GPU";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), why);
  }
}

TEST(Availability, BuildWithoutCudaRefusesDeviceWork) {
  if (built_with_cuda()) GTEST_SKIP() << "this build has CUDA";
  EXPECT_THROW(make_cuda_executor(), UsageError);
  EXPECT_EQ(device_count(), 0);
}

}  // namespace
}  // namespace cb::gpu
