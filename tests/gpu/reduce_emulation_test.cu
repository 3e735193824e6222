// The reduction kernels' own code (gpu/reduce_body.cuh: the launcher's plan, the per-thread
// loops, the element arithmetic and 16-bit pair conversions) run on the host over simulated
// grids and compared with reduce_host bit for bit. Needs no GPU, so the index arithmetic
// (scalar head, unrolled 16-byte vectors, remainder, tail, byte-wise fallback) and the
// semantics are checked on every machine; the GPU tests then check the same on a device.
// Threads are run one after another: each touches only its own elements, reading each
// before writing it, so the order cannot change the result.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "engine/reduce_host.hpp"
#include "gpu/reduce_body.cuh"
#include "reduce_reference.hpp"

namespace cb::gpu {
namespace {

using namespace kernels;  // NOLINT(google-build-using-namespace)
using test::Bytes;

template <typename Fmt, typename O>
void emulate(void* dst, const void* a, const void* b, size_t count, size_t threads) {
  using S = typename Fmt::Storage;
  const Plan p = plan_reduce(dst, a, b, count, sizeof(S));
  for (size_t t = 0; t < threads; ++t) {
    if (p.bytewise)
      reduce_bytewise_thread<Fmt, O>(t, threads, static_cast<unsigned char*>(dst),
                                     static_cast<const unsigned char*>(a),
                                     static_cast<const unsigned char*>(b), count);
    else
      reduce_aligned_thread<Fmt, O>(t, threads, static_cast<S*>(dst), static_cast<const S*>(a),
                                    static_cast<const S*>(b), p.head, p.vectors, count);
  }
}

template <typename Fmt>
void emulate_op(void* dst, const void* a, const void* b, size_t count, Op op, size_t threads) {
  switch (op) {
    case Op::Sum:
      return emulate<Fmt, SumOp>(dst, a, b, count, threads);
    case Op::Prod:
      return emulate<Fmt, ProdOp>(dst, a, b, count, threads);
    case Op::Max:
      return emulate<Fmt, MaxOp>(dst, a, b, count, threads);
    case Op::Min:
      return emulate<Fmt, MinOp>(dst, a, b, count, threads);
    default:  // the engine's own operators (core/types.hpp): never benchmarked
      break;
  }
}

// The dispatch of reduce_kernels.cu's reduce(), on the host.
void emulate_reduce(void* dst, const void* a, const void* b, size_t count, Dtype dt, Op op,
                    size_t threads) {
  switch (dt) {
    case Dtype::Char:
      return emulate_op<Native<int8_t>>(dst, a, b, count, op, threads);
    case Dtype::Int32:
      return emulate_op<Native<int32_t>>(dst, a, b, count, op, threads);
    case Dtype::Int64:
      return emulate_op<Native<int64_t>>(dst, a, b, count, op, threads);
    case Dtype::Float:
      return emulate_op<Native<float>>(dst, a, b, count, op, threads);
    case Dtype::Double:
      return emulate_op<Native<double>>(dst, a, b, count, op, threads);
    case Dtype::Half:
      return emulate_op<HalfFormat>(dst, a, b, count, op, threads);
    case Dtype::BFloat16:
      return emulate_op<Bf16Format>(dst, a, b, count, op, threads);
    default:  // the engine's own types (core/types.hpp): never benchmarked
      break;
  }
}

// Memory at a chosen offset from a 64-byte boundary, as device allocations are aligned.
class Placed {
 public:
  Placed(const Bytes& data, size_t offset) : storage_(data.size() + offset + 128) {
    const auto base = reinterpret_cast<uintptr_t>(storage_.data());
    at_ = storage_.data() + ((64 - base % 64) % 64) + offset;
    std::copy(data.begin(), data.end(), at_);
  }
  std::byte* get() { return at_; }

 private:
  Bytes storage_;
  std::byte* at_;
};

enum class Alias { None, DstIsA, DstIsB, All };

void run_case(Dtype dt, Op op, size_t count, const size_t (&offsets)[3], Alias alias,
              size_t threads) {
  const size_t bytes = count * dtype_size(dt);
  const Bytes a = test::random_elements(dt, count, 11 + count);
  const Bytes b = alias == Alias::All ? a : test::random_elements(dt, count, 12 + count);
  Bytes want(bytes);
  engine::reduce_host(want.data(), a.data(), b.data(), count, dt, op);

  Placed pa(a, offsets[1]), pb(b, offsets[2]), pd(Bytes(bytes), offsets[0]);
  std::byte* dst = pd.get();
  std::byte* x = pa.get();
  std::byte* y = pb.get();
  if (alias == Alias::DstIsA) dst = x;
  if (alias == Alias::DstIsB) dst = y;
  if (alias == Alias::All) dst = y = x;
  emulate_reduce(dst, x, y, count, dt, op, threads);
  const std::string what =
      std::string(to_string(dt)) + " " + std::string(to_string(op)) + " count " +
      std::to_string(count) + " offsets " + std::to_string(offsets[0]) + "/" +
      std::to_string(offsets[1]) + "/" + std::to_string(offsets[2]) + " alias " +
      std::to_string(static_cast<int>(alias)) + " threads " + std::to_string(threads);
  test::expect_same(Bytes(dst, dst + bytes), want, dt, op, what);
}

TEST(ReduceEmulation, EveryDtypeAndOpAtOddSizesAndGrids) {
  const size_t aligned[3] = {0, 0, 0};
  for (Dtype dt : kAllDtypes)
    for (Op op : kAllOps)
      for (size_t count : {0, 1, 3, 17, 1000, 4097, 65539})
        for (size_t threads : {1, 5, 256, 3000})
          run_case(dt, op, count, aligned, Alias::None, threads);
}

TEST(ReduceEmulation, MisalignedByteOffsets) {
  const size_t offsets[][3] = {{1, 1, 1},    {2, 2, 2},    {4, 4, 4}, {8, 8, 8},
                               {12, 12, 12}, {15, 15, 15}, {0, 4, 8}, {8, 0, 4},
                               {1, 2, 3},    {3, 0, 0},    {0, 0, 7}, {16, 32, 48}};
  for (Dtype dt : kAllDtypes)
    for (Op op : kAllOps)
      for (size_t count : {17, 4097})
        for (const auto& o : offsets)
          for (size_t threads : {1, 64}) run_case(dt, op, count, o, Alias::None, threads);
}

TEST(ReduceEmulation, InPlaceForms) {
  for (Dtype dt : kAllDtypes)
    for (Op op : kAllOps)
      for (size_t count : {1, 17, 4097})
        for (Alias alias : {Alias::DstIsA, Alias::DstIsB, Alias::All})
          for (size_t offset : {0, 6}) {
            const size_t o[3] = {offset, offset, offset};
            run_case(dt, op, count, o, alias, 7);
          }
}

// The plan: which elements go scalar, which in vectors.
TEST(ReduceEmulation, PlanSplitsAtSixteenByteBoundaries) {
  alignas(64) static float buf[64];
  const Plan aligned = plan_reduce(buf, buf, buf, 33, sizeof(float));
  EXPECT_FALSE(aligned.bytewise);
  EXPECT_EQ(aligned.head, 0u);
  EXPECT_EQ(aligned.vectors, 8u);  // 32 floats; the 33rd is the tail
  const Plan shifted = plan_reduce(buf + 1, buf + 1, buf + 5, 33, sizeof(float));
  EXPECT_EQ(shifted.head, 3u);  // up to the next 16-byte boundary
  EXPECT_EQ(shifted.vectors, 7u);
  const Plan mixed = plan_reduce(buf, buf + 1, buf, 33, sizeof(float));
  EXPECT_EQ(mixed.head, 33u);
  EXPECT_EQ(mixed.vectors, 0u);
  const auto* bytes = reinterpret_cast<const unsigned char*>(buf);
  EXPECT_TRUE(plan_reduce(bytes + 2, buf, buf, 3, sizeof(float)).bytewise);
  const Plan tiny = plan_reduce(buf + 1, buf + 1, buf + 1, 2, sizeof(float));
  EXPECT_EQ(tiny.head, 2u);
  EXPECT_EQ(tiny.vectors, 0u);
}

}  // namespace
}  // namespace cb::gpu
