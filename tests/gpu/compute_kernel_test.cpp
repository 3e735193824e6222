// gpu::launch_compute, the overlap benchmarks' GPU compute: its device time follows the
// request, and it leaves room for work on another stream (the collective's). The refusal
// runs everywhere; the rest needs a GPU and skips with the reason without one.
#include <gtest/gtest.h>

#include <string>

#include "core/errors.hpp"
#include "gpu/compute_kernel.hpp"
#include "gpu/device.hpp"
#include "gpu/reduce.hpp"
#include "gpu/stream.hpp"
#include "gpu_test.hpp"

namespace cb::gpu {
namespace {

TEST(ComputeKernel, WithoutAGpuSaysWhy) {
  const std::string why = unavailable_reason();
  if (why.empty()) GTEST_SKIP() << "a GPU is usable here";
  try {
    launch_compute(1e-3, nullptr);
    FAIL() << "a compute kernel was launched without a usable GPU";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), why);
  }
}

class ComputeKernelTest : public test::GpuTest {};

// Device time between events around one launch, in seconds.
double timed_launch(const Stream& stream, double seconds) {
  Event before(true), after(true);
  before.record(stream.handle());
  launch_compute(seconds, stream.handle());
  after.record(stream.handle());
  after.synchronize();
  return Event::elapsed_s(before, after);
}

TEST_F(ComputeKernelTest, DeviceTimeFollowsTheRequest) {
  Stream stream;
  timed_launch(stream, 0);  // the module loads at the first launch
  for (double seconds : {20e-6, 200e-6, 2e-3, 20e-3}) {
    const double took = timed_launch(stream, seconds);
    EXPECT_GE(took, 0.5 * seconds) << "asked " << seconds << " s";
    EXPECT_LE(took, 2.0 * seconds) << "asked " << seconds << " s";
  }
  EXPECT_LT(timed_launch(stream, 0), 1e-3) << "no time asked: the kernel ends at once";
}

// The collective's kernels must be able to run beside the compute, as NCCL's beside a
// framework's: a small reduction on another stream ends while a long compute still runs.
TEST_F(ComputeKernelTest, WorkOnAnotherStreamRunsAlongside) {
  constexpr size_t kCount = 1 << 16;
  test::DeviceBuffer dst(kCount * sizeof(float)), src(kCount * sizeof(float));
  device_memset(dst.get(), 0, dst.bytes());
  device_memset(src.get(), 0, src.bytes());
  Stream compute, other;
  launch_compute(0, compute.handle());
  reduce(dst.get(), src.get(), kCount, Dtype::Float, Op::Sum, other.handle());
  compute.synchronize();
  other.synchronize();

  Event compute_done, other_done;
  launch_compute(0.2, compute.handle());
  compute_done.record(compute.handle());
  reduce(dst.get(), src.get(), kCount, Dtype::Float, Op::Sum, other.handle());
  other_done.record(other.handle());
  other_done.synchronize();
  EXPECT_FALSE(compute_done.query()) << "the reduction waited for the compute to end";
  compute_done.synchronize();
}

}  // namespace
}  // namespace cb::gpu
