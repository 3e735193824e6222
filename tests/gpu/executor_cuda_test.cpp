// The engine's device executor (Reduce and Copy steps on a stream, an event per step),
// the pointer-attribute cache it consults, and the Stream/Event wrappers.
#include "engine/executor_cuda.hpp"

#include <cuda_runtime_api.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "core/errors.hpp"
#include "engine/reduce_host.hpp"
#include "gpu/pointer_cache.hpp"
#include "gpu/stream.hpp"
#include "gpu_test.hpp"

namespace cb::gpu {
namespace {

using engine::CudaExecutor;
using engine::make_cuda_executor;

using test::DeviceBuffer;
using test::GpuTest;

class CudaExecutorTest : public GpuTest {};

engine::Step reduce_step(void* dst, const void* src, size_t count) {
  engine::Step s{engine::StepKind::Reduce};
  s.dst = dst;
  s.src = src;
  s.count = count;
  s.dtype = Dtype::Float;
  s.op = Op::Sum;
  return s;
}

engine::Step copy_step(void* dst, const void* src, size_t bytes) {
  engine::Step s{engine::StepKind::Copy};
  s.dst = dst;
  s.src = src;
  s.bytes = bytes;
  return s;
}

// As Execution drives it: start, then test until done.
void run_step(engine::Executor& ex, engine::Step& s) {
  s.started = true;
  if (ex.start(s)) return;
  while (!ex.test(s)) {
  }
}

TEST_F(CudaExecutorTest, ReduceThenCopyRoundTrip) {
  constexpr size_t kCount = 100003;
  std::vector<float> a(kCount), b(kCount);
  std::iota(a.begin(), a.end(), 0.5f);
  std::iota(b.begin(), b.end(), -7.25f);
  std::vector<float> want = a;
  engine::reduce_host(want.data(), b.data(), kCount, Dtype::Float, Op::Sum);

  DeviceBuffer da(kCount * 4), db(kCount * 4), dc(kCount * 4);
  gpu::copy(da.get(), a.data(), kCount * 4);
  gpu::copy(db.get(), b.data(), kCount * 4);
  CudaExecutor ex;
  EXPECT_EQ(ex.mem(), Mem::Cuda);
  engine::Step r = reduce_step(da.get(), db.get(), kCount);
  EXPECT_FALSE(ex.start(r)) << "device work never completes inside start()";
  while (!ex.test(r)) {
  }
  EXPECT_EQ(r.token, 0u);
  EXPECT_TRUE(ex.test(r)) << "a completed step stays completed";
  engine::Step c = copy_step(dc.get(), da.get(), kCount * 4);
  run_step(ex, c);
  std::vector<float> got(kCount);
  gpu::copy(got.data(), dc.get(), kCount * 4);
  EXPECT_EQ(std::memcmp(got.data(), want.data(), kCount * 4), 0);
}

TEST_F(CudaExecutorTest, EventsAreReusedAcrossSteps) {
  DeviceBuffer da(4096), db(4096);
  device_memset(da.get(), 0, 4096);
  device_memset(db.get(), 0, 4096);
  CudaExecutor ex;
  for (int i = 0; i < 100; ++i) {
    engine::Step s = reduce_step(da.get(), db.get(), 1024);
    run_step(ex, s);
  }
  EXPECT_EQ(ex.events_created(), 1u);
}

TEST_F(CudaExecutorTest, RunsOnACallersStream) {
  const Stream stream;
  DeviceBuffer da(64), db(64);
  const std::vector<float> ones(16, 1.0f);
  gpu::copy(da.get(), ones.data(), 64);
  gpu::copy(db.get(), ones.data(), 64);
  CudaExecutor ex(stream.handle());
  EXPECT_EQ(ex.stream(), stream.handle());
  engine::Step s = reduce_step(da.get(), db.get(), 16);
  run_step(ex, s);
  std::vector<float> got(16);
  gpu::copy(got.data(), da.get(), 64);
  EXPECT_EQ(got, std::vector<float>(16, 2.0f));
}

TEST_F(CudaExecutorTest, PageableHostOperandIsRefusedWithTheReason) {
  DeviceBuffer da(64);
  std::vector<float> host(16, 1.0f);
  CudaExecutor ex;
  engine::Step s = reduce_step(da.get(), host.data(), 16);
  try {
    ex.start(s);
    FAIL() << "a kernel cannot read pageable host memory";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("pageable host memory"), std::string::npos) << e.what();
  }
}

TEST_F(CudaExecutorTest, CopiesMayInvolveHostMemory) {
  DeviceBuffer d(256);
  std::vector<unsigned char> in(256), out(256, 0);
  std::iota(in.begin(), in.end(), 0);
  CudaExecutor ex;
  engine::Step up = copy_step(d.get(), in.data(), 256);
  run_step(ex, up);
  engine::Step down = copy_step(out.data(), d.get(), 256);
  run_step(ex, down);
  EXPECT_EQ(in, out);
}

TEST_F(CudaExecutorTest, PointerCacheAnswersKnownAllocationsWithoutTheDriver) {
  PointerCache& cache = pointer_cache();
  DeviceBuffer d(1 << 20);
  const size_t before = cache.driver_queries();
  const PointerInfo base = cache.lookup(d.get());
  const PointerInfo inner = cache.lookup(d.get() + 12345);
  EXPECT_EQ(cache.driver_queries(), before) << "device_alloc entered the allocation";
  EXPECT_EQ(base.kind, MemoryKind::Device);
  EXPECT_EQ(inner.base, d.get());
  EXPECT_EQ(inner.size, size_t{1} << 20);
  int device = -1;
  cudaGetDevice(&device);
  EXPECT_EQ(inner.device, device);

  std::vector<char> pageable(100);
  EXPECT_EQ(cache.lookup(pageable.data()).kind, MemoryKind::Pageable);

  void* pinned = nullptr;
  ASSERT_EQ(cudaMallocHost(&pinned, 8192), cudaSuccess);
  const PointerInfo p = cache.lookup(static_cast<char*>(pinned) + 100);
  EXPECT_EQ(p.kind, MemoryKind::Pinned);
  EXPECT_TRUE(p.device_accessible());
  const size_t after_pinned = cache.driver_queries();
  cache.lookup(static_cast<char*>(pinned) + 200);  // same allocation: from the table
  if (p.size > 1) {
    EXPECT_EQ(cache.driver_queries(), after_pinned);
  }
  cache.erase(p.base);
  cudaFreeHost(pinned);
}

TEST_F(CudaExecutorTest, EventsTimeAStream) {
  const Stream stream;
  Event start(true), stop(true);
  DeviceBuffer a(1 << 24), b(1 << 24);
  start.record(stream.handle());
  cudaMemcpyAsync(a.get(), b.get(), 1 << 24, cudaMemcpyDeviceToDevice,
                  static_cast<cudaStream_t>(stream.handle()));
  stop.record(stream.handle());
  stop.synchronize();
  EXPECT_TRUE(stop.query());
  EXPECT_TRUE(stream.query());
  EXPECT_GT(Event::elapsed_s(start, stop), 0.0);
}

}  // namespace
}  // namespace cb::gpu
