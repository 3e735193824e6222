// gpu::Graph (-G): the work captured once, every launch running the whole sequence. The
// refusal runs everywhere; the captures need a GPU and skip with the reason without one.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "core/errors.hpp"
#include "gpu/device.hpp"
#include "gpu/graph.hpp"
#include "gpu/reduce.hpp"
#include "gpu/stream.hpp"
#include "gpu_test.hpp"

namespace cb::gpu {
namespace {

constexpr size_t kCount = 1000;

std::vector<std::byte> int32s(int32_t value) {
  const std::vector<int32_t> v(kCount, value);
  std::vector<std::byte> bytes(kCount * sizeof(int32_t));
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return bytes;
}

// Elements of `buf` that are not `value`.
size_t differing(const test::DeviceBuffer& buf, int32_t value) {
  const std::vector<std::byte> bytes = buf.download(0, kCount * sizeof(int32_t));
  std::vector<int32_t> v(kCount);
  std::memcpy(v.data(), bytes.data(), bytes.size());
  size_t wrong = 0;
  for (int32_t x : v) wrong += x != value;
  return wrong;
}

TEST(Graph, WithoutAGpuSaysWhy) {
  const std::string why = unavailable_reason();
  if (why.empty()) GTEST_SKIP() << "a GPU is usable here";
  bool called = false;
  try {
    Graph graph(nullptr, [&] { called = true; });
    FAIL() << "a graph was captured without a usable GPU";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), why);
  }
  EXPECT_FALSE(called);  // nothing runs when there is nothing to capture it
  EXPECT_TRUE(Graph().empty());
}

class GraphTest : public test::GpuTest {};

// dst += src captured 3 times, launched 4 times: dst = 12 x src (int32 sum: exact).
TEST_F(GraphTest, EveryLaunchRunsTheWholeCapturedSequence) {
  test::DeviceBuffer dst(kCount * sizeof(int32_t)), src(kCount * sizeof(int32_t));
  dst.upload(int32s(0));
  src.upload(int32s(1));
  Stream stream;
  int calls = 0;
  Graph graph(stream.handle(), [&] {
    for (int i = 0; i < 3; ++i, ++calls)
      reduce(dst.get(), src.get(), kCount, Dtype::Int32, Op::Sum, stream.handle());
  });
  EXPECT_EQ(calls, 3);  // enqueue runs once, at capture
  EXPECT_FALSE(graph.empty());
  EXPECT_GE(graph.nodes(), 3u);
  stream.synchronize();
  EXPECT_EQ(differing(dst, 0), 0u) << "capturing must not run the work";
  for (int k = 0; k < 4; ++k) graph.launch(stream.handle());
  stream.synchronize();
  EXPECT_EQ(differing(dst, 12), 0u);

  Graph moved = std::move(graph);
  EXPECT_TRUE(graph.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
  moved.launch(stream.handle());
  stream.synchronize();
  EXPECT_EQ(differing(dst, 15), 0u);
}

TEST_F(GraphTest, AThrowingCaptureLeavesTheStreamUsable) {
  test::DeviceBuffer dst(kCount * sizeof(int32_t)), src(kCount * sizeof(int32_t));
  dst.upload(int32s(0));
  src.upload(int32s(1));
  Stream stream;
  EXPECT_THROW(Graph(stream.handle(),
                     [&] {
                       reduce(dst.get(), src.get(), kCount, Dtype::Int32, Op::Sum, stream.handle());
                       throw RuntimeError("stopped half way");
                     }),
               RuntimeError);
  // Out of capture mode: ordinary work runs on the stream, and the discarded capture never ran.
  reduce(dst.get(), src.get(), kCount, Dtype::Int32, Op::Sum, stream.handle());
  stream.synchronize();
  EXPECT_EQ(differing(dst, 1), 0u);
}

// NCCL's in-place allreduce on one rank enqueues nothing: such a graph must launch (and
// do nothing), and say that it holds no captured node.
TEST_F(GraphTest, CapturingNothingGivesAGraphThatDoesNothing) {
  Stream stream;
  const Graph graph(stream.handle(), [] {});
  EXPECT_EQ(graph.nodes(), 0u);
  EXPECT_FALSE(graph.empty());
  graph.launch(stream.handle());
  graph.launch(stream.handle());
  stream.synchronize();
}

}  // namespace
}  // namespace cb::gpu
