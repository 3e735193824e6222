// The CUDA reduction kernels against the host reduction (reduce_host), bit for bit: every
// dtype and op, odd sizes, misaligned byte offsets, every aliasing form, special values.
// Only NaNs produced by floating Sum/Prod may differ, in payload (both sides documented so).
#include "gpu/reduce.hpp"

#include <bit>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/verify.hpp"
#include "engine/reduce_host.hpp"
#include "gpu/stream.hpp"
#include "gpu_test.hpp"
#include "reduce_reference.hpp"

namespace cb::gpu {
namespace {

using test::Bytes;
using test::DeviceBuffer;
using test::expect_same;
using test::GpuTest;
using test::random_elements;

enum class Alias { None, DstIsA, DstIsB, All };

struct Case {
  Dtype dt;
  Op op;
  size_t count;
  size_t dst_offset = 0, a_offset = 0, b_offset = 0;  // bytes into each allocation
  Alias alias = Alias::None;
};

std::string describe(const Case& c) {
  static const char* kAlias[] = {"distinct", "dst=a", "dst=b", "dst=a=b"};
  return std::string(to_string(c.dt)) + " " + std::string(to_string(c.op)) + " count " +
         std::to_string(c.count) + " offsets " + std::to_string(c.dst_offset) + "/" +
         std::to_string(c.a_offset) + "/" + std::to_string(c.b_offset) + " " +
         kAlias[static_cast<int>(c.alias)];
}

constexpr std::byte kGuard{0xA5};
constexpr size_t kSlack = 64;  // guard bytes after each buffer

// Runs c on the device and on the host and compares; checks that the bytes around the
// destination are untouched.
void run_case(const Case& c, const Stream& stream, uint64_t seed = 1) {
  const size_t bytes = c.count * dtype_size(c.dt);
  const Bytes a = random_elements(c.dt, c.count, seed);
  const Bytes b = c.alias == Alias::All ? a : random_elements(c.dt, c.count, seed + 1);
  Bytes want(bytes);
  engine::reduce_host(want.data(), a.data(), b.data(), c.count, c.dt, c.op);

  DeviceBuffer da(c.a_offset + bytes + kSlack), db(c.b_offset + bytes + kSlack),
      dd(c.dst_offset + bytes + kSlack);
  const Bytes guard(dd.bytes(), kGuard);
  dd.upload(guard);
  da.upload(Bytes(da.bytes(), kGuard));
  da.upload(a, c.a_offset);
  db.upload(b, c.b_offset);

  std::byte* pa = da.get() + c.a_offset;
  std::byte* pb = db.get() + c.b_offset;
  std::byte* dst = dd.get() + c.dst_offset;
  size_t dst_offset = c.dst_offset;
  const DeviceBuffer* dst_buffer = &dd;
  switch (c.alias) {
    case Alias::None:
      break;
    case Alias::DstIsA:
      dst = pa, dst_offset = c.a_offset, dst_buffer = &da;
      break;
    case Alias::DstIsB:
      dst = pb, dst_offset = c.b_offset, dst_buffer = &db;
      break;
    case Alias::All:
      pb = pa, dst = pa, dst_offset = c.a_offset, dst_buffer = &da;
      break;
  }
  if (c.alias == Alias::DstIsA)
    reduce(dst, pb, c.count, c.dt, c.op, stream.handle());  // the accumulate overload
  else
    reduce(dst, pa, pb, c.count, c.dt, c.op, stream.handle());
  stream.synchronize();
  expect_same(dst_buffer->download(dst_offset, bytes), want, c.dt, c.op, describe(c));
  if (c.alias == Alias::None) {
    EXPECT_EQ(dd.download(0, c.dst_offset), Bytes(c.dst_offset, kGuard)) << describe(c);
    EXPECT_EQ(dd.download(c.dst_offset + bytes, kSlack), Bytes(kSlack, kGuard)) << describe(c);
  }
}

class ReduceKernel : public GpuTest {
 protected:
  void TearDown() override { detail::set_reduce_blocks_per_sm(0); }
};

const size_t kOddSizes[] = {0, 1, 3, 17, 1000, 4097, (size_t{1} << 20) + 3};

TEST_F(ReduceKernel, EveryDtypeAndOpAtOddSizes) {
  const Stream stream;
  for (Dtype dt : kAllDtypes)
    for (Op op : kAllOps)
      for (size_t count : kOddSizes) run_case({dt, op, count}, stream);
}

TEST_F(ReduceKernel, MisalignedByteOffsets) {
  const Stream stream;
  // Same offset within 16 bytes (vector body with scalar head/tail), differing offsets
  // (scalar), and offsets that break natural alignment (byte-wise).
  const size_t offsets[][3] = {{0, 0, 0},    {1, 1, 1},    {2, 2, 2},   {4, 4, 4}, {8, 8, 8},
                               {12, 12, 12}, {15, 15, 15}, {0, 4, 8},   {8, 0, 4}, {1, 2, 3},
                               {3, 0, 0},    {0, 0, 7},    {16, 32, 48}};
  for (Dtype dt : kAllDtypes)
    for (Op op : kAllOps)
      for (size_t count : {size_t{17}, size_t{4097}})
        for (const auto& o : offsets) run_case({dt, op, count, o[0], o[1], o[2]}, stream);
}

TEST_F(ReduceKernel, InPlaceForms) {
  const Stream stream;
  for (Dtype dt : kAllDtypes)
    for (Op op : kAllOps)
      for (size_t count : {size_t{1}, size_t{17}, size_t{4097}, (size_t{1} << 20) + 3})
        for (Alias alias : {Alias::DstIsA, Alias::DstIsB, Alias::All})
          for (size_t offset : {size_t{0}, size_t{6}})
            run_case({dt, op, count, offset, offset, offset, alias}, stream);
}

// A grid far smaller than the data: every thread loops many times, through the unrolled
// body and the remainder.
TEST_F(ReduceKernel, SmallGridCoversEverything) {
  const Stream stream;
  detail::set_reduce_blocks_per_sm(1);
  for (Dtype dt : {Dtype::Char, Dtype::Half, Dtype::Float, Dtype::Double})
    run_case({dt, Op::Sum, (size_t{1} << 22) + 5, 0, 0, 0}, stream);
}

// The documented rules, spelled out: NaN wins (a's first), ties go to b (+0 vs -0).
TEST_F(ReduceKernel, MaxMinNanAndSignedZeroRules) {
  const Stream stream;
  const float nan_a = std::bit_cast<float>(0x7FC00001u), nan_b = std::bit_cast<float>(0x7FC00002u);
  const std::vector<float> a = {0.0f, -0.0f, nan_a, 1.0f, nan_a, 2.0f};
  const std::vector<float> b = {-0.0f, 0.0f, 1.0f, nan_b, nan_b, 2.0f};
  const std::vector<uint32_t> max_want = {0x80000000u, 0x00000000u, 0x7FC00001u,
                                          0x7FC00002u, 0x7FC00001u, 0x40000000u};
  DeviceBuffer da(24), db(24), dd(24);
  gpu::copy(da.get(), a.data(), 24);
  gpu::copy(db.get(), b.data(), 24);
  for (Op op : {Op::Max, Op::Min}) {
    reduce(dd.get(), da.get(), db.get(), a.size(), Dtype::Float, op, stream.handle());
    stream.synchronize();
    std::vector<uint32_t> got(a.size());
    gpu::copy(got.data(), dd.get(), 24);
    EXPECT_EQ(got, max_want) << to_string(op);  // Min picks the same operands here
  }
}

TEST_F(ReduceKernel, IntegersWrap) {
  const Stream stream;
  const int8_t a8[] = {127, -128, 16}, b8[] = {1, -1, 16};
  DeviceBuffer da(3), db(3);
  gpu::copy(da.get(), a8, 3);
  gpu::copy(db.get(), b8, 3);
  reduce(da.get(), db.get(), 2, Dtype::Char, Op::Sum, stream.handle());
  reduce(da.get() + 2, db.get() + 2, 1, Dtype::Char, Op::Prod, stream.handle());
  stream.synchronize();
  int8_t got[3];
  gpu::copy(got, da.get(), 3);
  EXPECT_EQ(got[0], -128);
  EXPECT_EQ(got[1], 127);
  EXPECT_EQ(got[2], 0);  // 256 wraps to 0
}

}  // namespace
}  // namespace cb::gpu
