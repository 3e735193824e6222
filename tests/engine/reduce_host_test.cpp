// reduce_host against a scalar reference written independently here: integers through
// __int128 and an explicit wrap, floating types through double and the rounding model in
// reference.hpp. Both the variant picked for this CPU and the baseline are exercised.
#include "engine/reduce_host.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/half.hpp"
#include "core/reduce_ops.hpp"
#include "reference.hpp"

namespace cb::engine {
namespace {

using Bytes = std::vector<std::byte>;
using ReduceFn = void (*)(void*, const void*, const void*, size_t, Dtype, Op);

void reduce_best(void* dst, const void* a, const void* b, size_t n, Dtype dt, Op op) {
  reduce_host(dst, a, b, n, dt, op);
}

template <typename T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <typename T>
void store(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

bool is_floating(Dtype dt) {
  return !dtype_is_integer(dt);
}

// ---- Reference semantics ----

// The documented Max/Min rule: NaN wins (a's first), else the comparison, ties go to b.
bool picks_a(Op op, double a, double b) {
  if (std::isnan(a)) return true;
  if (std::isnan(b)) return false;
  return op == Op::Max ? a > b : a < b;
}

template <typename T>
T wrap_to(__int128 v) {
  constexpr int kBits = 8 * sizeof(T);
  const __int128 modulus = static_cast<__int128>(1) << kBits;
  __int128 r = v % modulus;  // C++ remainder keeps the sign of v
  if (r < 0) r += modulus;
  if (r > std::numeric_limits<T>::max()) r -= modulus;
  return static_cast<T>(r);
}

template <typename T>
T integer_reference(Op op, T a, T b) {
  const __int128 wa = a, wb = b;
  switch (op) {
    case Op::Sum:
      return wrap_to<T>(wa + wb);
    case Op::Prod:
      return wrap_to<T>(wa * wb);
    case Op::Max:
      return a > b ? a : b;
    case Op::Min:
      return a < b ? a : b;
    default:  // the engine's own operators (core/types.hpp): never benchmarked
      break;
  }
  return 0;
}

double decode_floating(Dtype dt, const std::byte* p) {
  switch (dt) {
    case Dtype::Float:
      return load<float>(p);
    case Dtype::Double:
      return load<double>(p);
    case Dtype::Half:
      return half_to_float(load<uint16_t>(p));
    case Dtype::BFloat16:
      return bf16_to_float(load<uint16_t>(p));
    default:
      return 0;
  }
}

// Stores x, which must already be representable in dt (or NaN/inf).
void encode_floating(Dtype dt, double x, std::byte* p) {
  switch (dt) {
    case Dtype::Float:
      return store(p, static_cast<float>(x));
    case Dtype::Double:
      return store(p, x);
    case Dtype::Half:
      return store(p, float_to_half(static_cast<float>(x)));
    case Dtype::BFloat16:
      return store(p, float_to_bf16(static_cast<float>(x)));
    default:
      return;
  }
}

// a op b rounded to double, then to the element format. That equals rounding it once:
// double has at least 2p + 2 significand bits for every p here (53 >= 2 * 24 + 2), the
// condition under which double rounding of a sum or product is harmless.
double floating_arithmetic_reference(Dtype dt, Op op, double a, double b) {
  if (dt == Dtype::Double) return op == Op::Sum ? a + b : a * b;
  const double exact = op == Op::Sum ? a + b : a * b;
  if (std::isnan(exact)) return exact;
  switch (dt) {
    case Dtype::Float:
      return static_cast<float>(exact);
    case Dtype::Half:
      return test::round_to_half(exact);
    case Dtype::BFloat16:
      return test::round_to_bf16(exact);
    default:
      return 0;
  }
}

void reference_element(Dtype dt, Op op, const std::byte* a, const std::byte* b, std::byte* out) {
  switch (dt) {
    case Dtype::Char:
      return store(out, integer_reference(op, load<int8_t>(a), load<int8_t>(b)));
    case Dtype::Int32:
      return store(out, integer_reference(op, load<int32_t>(a), load<int32_t>(b)));
    case Dtype::Int64:
      return store(out, integer_reference(op, load<int64_t>(a), load<int64_t>(b)));
    default:
      break;
  }
  const double da = decode_floating(dt, a), db = decode_floating(dt, b);
  if (op == Op::Max || op == Op::Min) {
    std::memcpy(out, picks_a(op, da, db) ? a : b, dtype_size(dt));  // bit-for-bit operand
  } else {
    encode_floating(dt, floating_arithmetic_reference(dt, op, da, db), out);
  }
}

// Bitwise equality, except that any NaN matches any NaN for Sum/Prod (payload unspecified).
bool same_element(Dtype dt, Op op, const std::byte* got, const std::byte* want) {
  if (is_floating(dt) && (op == Op::Sum || op == Op::Prod)) {
    const double g = decode_floating(dt, got), w = decode_floating(dt, want);
    if (std::isnan(w)) return std::isnan(g);
  }
  return std::memcmp(got, want, dtype_size(dt)) == 0;
}

// ---- Test data: random values, extremes and specials mixed ----

template <typename T>
T random_integer(unsigned kind, uint64_t bits) {
  using L = std::numeric_limits<T>;
  const T extremes[] = {0, 1, -1, L::max(), L::min(), L::max() - 1, L::min() + 1};
  if (kind < 3) return extremes[bits % 7];                                // provoke wrap-around
  if (kind < 8) return static_cast<T>(static_cast<int>(bits % 21) - 10);  // small values
  return static_cast<T>(bits);                                            // anything
}

void random_element(Dtype dt, std::mt19937_64& rng, std::byte* out) {
  const auto kind = static_cast<unsigned>(rng() % 16);
  const uint64_t bits = rng();
  switch (dt) {
    case Dtype::Char:
      return store(out, random_integer<int8_t>(kind, bits));
    case Dtype::Int32:
      return store(out, random_integer<int32_t>(kind, bits));
    case Dtype::Int64:
      return store(out, random_integer<int64_t>(kind, bits));
    default:
      break;
  }
  if (kind < 4) {  // arbitrary bit patterns: every exponent, NaNs, subnormals, infinities
    std::memcpy(out, &bits, dtype_size(dt));
    return;
  }
  const double specials[] = {0.0,
                             -0.0,
                             HUGE_VAL,
                             -HUGE_VAL,
                             std::nan(""),
                             65504.0,
                             1.0,
                             std::ldexp(1.0, -24),
                             std::ldexp(1.0, -126),
                             3e38};
  double x = 0;
  if (kind < 6) {
    x = specials[bits % 10];
  } else if (kind < 12) {  // similar magnitudes: rounding of sums and products matters
    x = std::ldexp(static_cast<double>(bits >> 11) / std::ldexp(1.0, 53) + 1.0,
                   static_cast<int>(bits % 7) - 3) *
        ((bits & 1) ? -1.0 : 1.0);
  } else {  // wide magnitudes, including subnormal and overflow for the 16-bit formats
    x = std::ldexp(static_cast<double>(bits >> 11) / std::ldexp(1.0, 53),
                   static_cast<int>(bits % 60) - 30);
  }
  switch (dt) {
    case Dtype::Float:
      return store(out, static_cast<float>(x));
    case Dtype::Double:
      return store(out, x);
    case Dtype::Half:
      return store(out, float_to_half(static_cast<float>(x)));
    default:
      return store(out, float_to_bf16(static_cast<float>(x)));
  }
}

std::string hex(const std::byte* p, size_t size) {
  std::string out = "0x";
  for (size_t k = size; k-- > 0;) {  // little-endian: most significant byte last
    char buf[4];
    std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned>(p[k]));
    out += buf;
  }
  return out;
}

// ---- One run: buffers at byte offsets, optional aliasing, guards around dst ----

enum class Aliasing { None, DstIsA, DstIsB, DstIsAAndB, AccumulateForm };
constexpr Aliasing kAllAliasings[] = {Aliasing::None, Aliasing::DstIsA, Aliasing::DstIsB,
                                      Aliasing::DstIsAAndB, Aliasing::AccumulateForm};
// Sizes around the vector widths, plus larger ones mixing 1 KiB blocks, one-vector blocks and
// a scalar tail in a single call (2600 int8: 2 + 17 blocks + 8 scalar elements).
constexpr size_t kSizes[] = {0, 1, 2, 3, 7, 15, 16, 17, 31, 33, 1000, 2600, 4097};
constexpr std::byte kGuard{0xA5};
constexpr size_t kGuardBytes = 16;

const char* name_of(Aliasing a) {
  switch (a) {
    case Aliasing::None:
      return "distinct";
    case Aliasing::DstIsA:
      return "dst==a";
    case Aliasing::DstIsB:
      return "dst==b";
    case Aliasing::DstIsAAndB:
      return "dst==a==b";
    case Aliasing::AccumulateForm:
      return "accumulate(dst,src)";
  }
  return "?";
}

// A buffer holding `bytes` at byte `offset` into an allocation, guard bytes all around.
struct GuardedBuffer {
  Bytes storage;
  size_t offset;
  GuardedBuffer(const Bytes& contents, size_t byte_offset)
      : storage(byte_offset + contents.size() + kGuardBytes, kGuard), offset(byte_offset) {
    std::copy(contents.begin(), contents.end(), storage.begin() + static_cast<ptrdiff_t>(offset));
  }
  std::byte* data() { return storage.data() + offset; }
  bool guards_intact(size_t bytes) const {
    for (size_t i = 0; i < storage.size(); ++i) {
      if ((i < offset || i >= offset + bytes) && storage[i] != kGuard) return false;
    }
    return true;
  }
};

void run_case(ReduceFn reduce, Dtype dt, Op op, size_t count, Aliasing aliasing, size_t offset,
              std::mt19937_64& rng) {
  const size_t size = dtype_size(dt);
  const size_t bytes = count * size;
  Bytes a(bytes), b(bytes);
  for (size_t i = 0; i < count; ++i) {
    random_element(dt, rng, &a[i * size]);
    random_element(dt, rng, &b[i * size]);
  }
  if (aliasing == Aliasing::DstIsAAndB) b = a;
  Bytes want(bytes);
  for (size_t i = 0; i < count; ++i)
    reference_element(dt, op, &a[i * size], &b[i * size], &want[i * size]);

  // Offsets chosen so that dst, a and b are each misaligned differently.
  GuardedBuffer dst(aliasing == Aliasing::DstIsB ? b : a, offset);
  GuardedBuffer in_a(a, (offset + 3) % 8), in_b(b, (offset + 5) % 8);
  switch (aliasing) {
    case Aliasing::None:
      reduce(dst.data(), in_a.data(), in_b.data(), count, dt, op);
      break;
    case Aliasing::DstIsA:
      reduce(dst.data(), dst.data(), in_b.data(), count, dt, op);
      break;
    case Aliasing::DstIsB:
      reduce(dst.data(), in_a.data(), dst.data(), count, dt, op);
      break;
    case Aliasing::DstIsAAndB:
      reduce(dst.data(), dst.data(), dst.data(), count, dt, op);
      break;
    case Aliasing::AccumulateForm:
      reduce_host(dst.data(), in_b.data(), count, dt, op);
      break;
  }

  const std::string where = std::string(to_string(dt)) + " " + std::string(to_string(op)) +
                            " count=" + std::to_string(count) + " " + name_of(aliasing) +
                            " offset=" + std::to_string(offset);
  for (size_t i = 0; i < count; ++i) {
    if (!same_element(dt, op, dst.data() + i * size, &want[i * size])) {
      FAIL() << where << ": element " << i << " a=" << hex(&a[i * size], size)
             << " b=" << hex(&b[i * size], size) << " got " << hex(dst.data() + i * size, size)
             << " want " << hex(&want[i * size], size);
    }
  }
  EXPECT_TRUE(dst.guards_intact(bytes)) << where << ": wrote outside dst";
  if (aliasing == Aliasing::None || aliasing == Aliasing::AccumulateForm) {
    EXPECT_TRUE(std::equal(b.begin(), b.end(), in_b.data())) << where << ": modified b";
  }
  if (aliasing == Aliasing::None) {
    EXPECT_TRUE(std::equal(a.begin(), a.end(), in_a.data())) << where << ": modified a";
  }
}

// ---- Every Dtype x Op x variant, over all sizes, aliasings and offsets ----

struct Variant {
  const char* name;
  ReduceFn fn;
};
const Variant kBest{"best", reduce_best};
const Variant kBaseline{"baseline", detail::reduce_host_baseline};

struct Combination {
  Dtype dt;
  Op op;
  Variant variant;
};

void PrintTo(const Combination& c, std::ostream* os) {
  *os << to_string(c.dt) << " " << to_string(c.op) << " " << c.variant.name;
}

std::vector<Combination> all_combinations() {
  std::vector<Combination> out;
  for (const Dtype dt : kAllDtypes) {
    for (const Op op : kAllOps) {
      for (const Variant& v : {kBest, kBaseline}) out.push_back({dt, op, v});
    }
  }
  return out;
}

class ReduceHostAll : public ::testing::TestWithParam<Combination> {};

TEST_P(ReduceHostAll, MatchesReferenceForAllSizesAliasingsAndOffsets) {
  const Combination c = GetParam();
  std::mt19937_64 rng(static_cast<uint64_t>(c.dt) * 131 + static_cast<uint64_t>(c.op));
  for (const size_t count : kSizes) {
    for (const Aliasing aliasing : kAllAliasings) {
      // The two-pointer overload has no baseline entry point; test it once, via "best".
      if (aliasing == Aliasing::AccumulateForm && c.variant.fn != reduce_best) continue;
      for (size_t offset = 0; offset < 8; ++offset) {
        run_case(c.variant.fn, c.dt, c.op, count, aliasing, offset, rng);
        if (HasFatalFailure()) return;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(DtypeOpVariant, ReduceHostAll, ::testing::ValuesIn(all_combinations()),
                         [](const ::testing::TestParamInfo<Combination>& param_info) {
                           const Combination& c = param_info.param;
                           return std::string(to_string(c.dt)) + "_" +
                                  std::string(to_string(c.op)) + "_" + c.variant.name;
                         });

// ---- Hand-picked cases, readable on their own ----

template <typename T>
std::vector<T> reduce_pairs(Dtype dt, Op op, std::vector<T> a, const std::vector<T>& b) {
  reduce_host(a.data(), b.data(), a.size(), dt, op);
  return a;
}

TEST(ReduceHost, IntegerSumAndProdWrapAround) {
  using L8 = std::numeric_limits<int8_t>;
  using L32 = std::numeric_limits<int32_t>;
  using L64 = std::numeric_limits<int64_t>;
  EXPECT_EQ(reduce_pairs<int8_t>(Dtype::Char, Op::Sum, {L8::max(), L8::min(), -1}, {1, -1, 1}),
            (std::vector<int8_t>{L8::min(), L8::max(), 0}));
  EXPECT_EQ(reduce_pairs<int8_t>(Dtype::Char, Op::Prod, {16, L8::min(), 100}, {16, -1, 3}),
            (std::vector<int8_t>{0, L8::min(), 44}));  // 256 -> 0, 128 -> -128, 300 -> 44
  EXPECT_EQ(reduce_pairs<int32_t>(Dtype::Int32, Op::Sum, {L32::max(), L32::min()}, {1, -1}),
            (std::vector<int32_t>{L32::min(), L32::max()}));
  EXPECT_EQ(reduce_pairs<int32_t>(Dtype::Int32, Op::Prod, {65536, L32::min()}, {65536, -1}),
            (std::vector<int32_t>{0, L32::min()}));
  EXPECT_EQ(reduce_pairs<int64_t>(Dtype::Int64, Op::Sum, {L64::max(), L64::min()}, {1, -1}),
            (std::vector<int64_t>{L64::min(), L64::max()}));
  EXPECT_EQ(reduce_pairs<int64_t>(Dtype::Int64, Op::Prod, {L64::min(), int64_t{1} << 32},
                                  {-1, (int64_t{1} << 32) + 1}),
            (std::vector<int64_t>{L64::min(), int64_t{1} << 32}));
}

// Element-wise a op b == want for a 16-bit format given by its encoder. 17 copies so both
// the vector body and the scalar tail of each variant see the case.
void expect_elementwise(Dtype dt, Op op, uint16_t (*encode)(float), float a, float b, float want) {
  constexpr size_t kCopies = 17;
  const std::vector<uint16_t> va(kCopies, encode(a)), vb(kCopies, encode(b));
  for (const ReduceFn fn : {reduce_best, detail::reduce_host_baseline}) {
    std::vector<uint16_t> out(kCopies);
    fn(out.data(), va.data(), vb.data(), kCopies, dt, op);
    for (const uint16_t r : out)
      EXPECT_EQ(r, encode(want)) << a << " " << to_string(op) << " " << b;
  }
}

TEST(ReduceHost, HalfRoundsToNearestEven) {
  const float inf = std::numeric_limits<float>::infinity();
  expect_elementwise(Dtype::Half, Op::Sum, float_to_half, 2048, 1, 2048);  // tie, even below
  expect_elementwise(Dtype::Half, Op::Sum, float_to_half, 2048, 3, 2052);  // tie, even above
  expect_elementwise(Dtype::Half, Op::Sum, float_to_half, 2050, 1, 2052);  // 2051: tie to even
  expect_elementwise(Dtype::Half, Op::Sum, float_to_half, 65504, 8,
                     65504);  // below the overflow tie
  expect_elementwise(Dtype::Half, Op::Sum, float_to_half, 65504, 16, inf);  // tie at 65520: inf
  expect_elementwise(Dtype::Half, Op::Sum, float_to_half, 1, std::ldexp(1.0f, -24), 1);
  expect_elementwise(Dtype::Half, Op::Prod, float_to_half, std::ldexp(1.0f, -12),
                     std::ldexp(1.0f, -13),
                     0);  // 2^-25: tie between 0 and the smallest subnormal
  expect_elementwise(Dtype::Half, Op::Prod, float_to_half, std::ldexp(3.0f, -12),
                     std::ldexp(1.0f, -13),
                     std::ldexp(1.0f, -23));  // 1.5 quanta: tie, even is 2 quanta
  expect_elementwise(Dtype::Half, Op::Prod, float_to_half, 300, 300, inf);
}

TEST(ReduceHost, BFloat16RoundsToNearestEven) {
  expect_elementwise(Dtype::BFloat16, Op::Sum, float_to_bf16, 256, 1, 256);  // spacing 2: tie, even
  expect_elementwise(Dtype::BFloat16, Op::Sum, float_to_bf16, 256, 3, 260);  // 259: tie to even
  expect_elementwise(Dtype::BFloat16, Op::Sum, float_to_bf16, 1, std::ldexp(1.0f, -8),
                     1);  // 1 + half an ulp
  expect_elementwise(Dtype::BFloat16, Op::Prod, float_to_bf16, 3e38f, 2,
                     std::numeric_limits<float>::infinity());
}

TEST(ReduceHost, MaxMinPropagateNaNAndPreferBOnTies) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const Op op : {Op::Max, Op::Min}) {
    std::vector<float> a = {nan, 1.0f, 0.0f, -0.0f, 2.0f};
    const std::vector<float> b = {1.0f, nan, -0.0f, 0.0f, 2.0f};
    reduce_host(a.data(), b.data(), a.size(), Dtype::Float, op);
    EXPECT_TRUE(std::isnan(a[0]) && std::isnan(a[1]));
    EXPECT_TRUE(std::signbit(a[2])) << "equal operands: result is b (-0)";
    EXPECT_FALSE(std::signbit(a[3])) << "equal operands: result is b (+0)";
    EXPECT_EQ(a[4], 2.0f);
  }
  std::vector<double> d = {1.0, -HUGE_VAL};
  reduce_host(d.data(), std::vector<double>{std::nan(""), 5.0}.data(), 2, Dtype::Double, Op::Max);
  EXPECT_TRUE(std::isnan(d[0]));
  EXPECT_EQ(d[1], 5.0);
}

TEST(ReduceHost, SixteenBitMaxMinReturnAnOperandBitForBit) {
  // A signalling half NaN must come back unchanged, not re-rounded/quietened.
  std::vector<uint16_t> a = {0x7C01, 0x3C00}, b = {0x3C00, 0xFD23};
  reduce_host(a.data(), b.data(), 2, Dtype::Half, Op::Max);
  EXPECT_EQ(a, (std::vector<uint16_t>{0x7C01, 0xFD23}));
}

TEST(ReduceHost, ZeroCountTouchesNothing) {
  constexpr std::byte kSentinel{0xAB};
  for (const Dtype dt : kAllDtypes) {
    for (const Op op : kAllOps) {
      // Null pointers with count 0 must not be dereferenced (a fault fails the test) ...
      reduce_host(nullptr, nullptr, 0, dt, op);
      reduce_host(nullptr, nullptr, nullptr, 0, dt, op);
      // ... and real buffers must come back byte for byte as they were.
      std::vector<std::byte> inout(64, kSentinel), in(64, std::byte{0x11}), out(64, kSentinel);
      reduce_host(inout.data(), in.data(), 0, dt, op);
      reduce_host(out.data(), in.data(), inout.data(), 0, dt, op);
      EXPECT_EQ(std::count(inout.begin(), inout.end(), kSentinel), 64) << to_string(dt);
      EXPECT_EQ(std::count(out.begin(), out.end(), kSentinel), 64) << to_string(dt);
      EXPECT_EQ(std::count(in.begin(), in.end(), std::byte{0x11}), 64) << to_string(dt);
    }
  }
}

// ---- The engine's own types (the drop-in's MPI types): int16, complex, MAXLOC pairs. ----

// Every size 1..70 (vector bodies and tails), distinct and dst == a, both variants.
template <typename T, typename Ref>
void expect_engine_type(Dtype dt, Op op, const std::vector<T>& a, const std::vector<T>& b,
                        Ref&& ref) {
  for (const ReduceFn fn : {reduce_best, detail::reduce_host_baseline}) {
    for (size_t n = 1; n <= a.size(); ++n) {
      std::vector<T> out(n), io(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n));
      fn(out.data(), a.data(), b.data(), n, dt, op);
      fn(io.data(), io.data(), b.data(), n, dt, op);
      for (size_t i = 0; i < n; ++i) {
        const T want = ref(a[i], b[i]);
        ASSERT_TRUE(ref.equal(out[i], want))
            << to_string(dt) << " " << to_string(op) << " n=" << n << " element " << i;
        ASSERT_TRUE(ref.equal(io[i], want)) << to_string(dt) << " in place, element " << i;
      }
    }
  }
}

struct Int16Ref {
  Op op;
  int16_t operator()(int16_t a, int16_t b) const {
    switch (op) {
      case Op::Sum:
        return wrap_to<int16_t>(static_cast<__int128>(a) + b);
      case Op::Prod:
        return wrap_to<int16_t>(static_cast<__int128>(a) * b);
      case Op::Max:
        return std::max(a, b);
      default:
        return std::min(a, b);
    }
  }
  bool equal(int16_t x, int16_t y) const { return x == y; }
};

TEST(ReduceHost, Int16EveryOperatorWraps) {
  std::mt19937 rng(16);
  std::vector<int16_t> a(70), b(70);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<int16_t>(rng());
    b[i] = static_cast<int16_t>(rng());
  }
  a[0] = std::numeric_limits<int16_t>::max();
  b[0] = 1;  // wraps to min
  for (const Op op : kAllOps) expect_engine_type(Dtype::Int16, op, a, b, Int16Ref{op});
  EXPECT_EQ(dtype_size(Dtype::Int16), 2u);
}

template <typename T>
struct ComplexRef {
  Op op;
  reduce_ops::Complex<T> operator()(reduce_ops::Complex<T> a, reduce_ops::Complex<T> b) const {
    if (op == Op::Sum) return {a.re + b.re, a.im + b.im};
    return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
  }
  bool equal(reduce_ops::Complex<T> x, reduce_ops::Complex<T> y) const {
    return x.re == y.re && x.im == y.im;
  }
};

template <typename T>
void complex_cases(Dtype dt) {
  std::mt19937 rng(7);
  std::vector<reduce_ops::Complex<T>> a(70), b(70);
  for (size_t i = 0; i < a.size(); ++i) {  // exact small integers and fractions
    a[i] = {T(static_cast<int>(rng() % 41) - 20) / 4, T(static_cast<int>(rng() % 41) - 20)};
    b[i] = {T(static_cast<int>(rng() % 41) - 20), T(static_cast<int>(rng() % 41) - 20) / 8};
  }
  a[1] = {T(3), T(2)};
  b[1] = {T(1), T(-4)};  // (3 + 2i)(1 - 4i) = 11 - 10i
  for (const Op op : {Op::Sum, Op::Prod}) expect_engine_type(dt, op, a, b, ComplexRef<T>{op});
  std::vector<reduce_ops::Complex<T>> out(2);
  reduce_host(out.data(), a.data(), b.data(), 2, dt, Op::Prod);
  EXPECT_EQ(out[1].re, T(11));
  EXPECT_EQ(out[1].im, T(-10));
  EXPECT_EQ(dtype_size(dt), 2 * sizeof(T));
}

TEST(ReduceHost, ComplexSumAndProd) {
  complex_cases<float>(Dtype::ComplexFloat);
  complex_cases<double>(Dtype::ComplexDouble);
}

// MPI's definition: the larger (smaller) value; equal values take the lower index.
template <typename V>
struct LocRef {
  Op op;
  reduce_ops::LocPair<V> operator()(reduce_ops::LocPair<V> a, reduce_ops::LocPair<V> b) const {
    if (a.value == b.value) return {a.value, std::min(a.index, b.index)};
    const bool b_wins = op == Op::MaxLoc ? b.value > a.value : b.value < a.value;
    return b_wins ? b : a;
  }
  bool equal(reduce_ops::LocPair<V> x, reduce_ops::LocPair<V> y) const {
    return x.value == y.value && x.index == y.index;  // never the padding
  }
};

template <typename V>
void loc_cases(Dtype dt) {
  std::mt19937 rng(3);
  std::vector<reduce_ops::LocPair<V>> a(70), b(70);
  for (size_t i = 0; i < a.size(); ++i) {  // values 0..3: many ties
    a[i] = {V(rng() % 4), static_cast<int>(rng() % 100)};
    b[i] = {V(rng() % 4), static_cast<int>(rng() % 100)};
  }
  a[0] = {V(2), 9};
  b[0] = {V(2), 4};  // a tie: index 4 either way
  for (const Op op : {Op::MaxLoc, Op::MinLoc}) expect_engine_type(dt, op, a, b, LocRef<V>{op});
  for (const Op op : {Op::MaxLoc, Op::MinLoc}) {
    std::vector<reduce_ops::LocPair<V>> out(1);
    reduce_host(out.data(), a.data(), b.data(), 1, dt, op);
    EXPECT_EQ(out[0].index, 4) << to_string(dt);
    reduce_host(out.data(), b.data(), a.data(), 1, dt, op);
    EXPECT_EQ(out[0].index, 4) << to_string(dt);
  }
  EXPECT_EQ(dtype_size(dt), sizeof(reduce_ops::LocPair<V>));
}

TEST(ReduceHost, MaxLocMinLocOnEveryPairType) {
  loc_cases<float>(Dtype::FloatInt);
  loc_cases<double>(Dtype::DoubleInt);
  loc_cases<long>(Dtype::LongInt);
  loc_cases<int>(Dtype::IntInt);
  loc_cases<short>(Dtype::ShortInt);
  loc_cases<long double>(Dtype::LongDoubleInt);
}

TEST(ReduceHost, OperatorsMpiDoesNotDefineAreRefused) {
  std::vector<std::byte> x(64);
  EXPECT_THROW(reduce_host(x.data(), x.data(), 1, Dtype::ComplexFloat, Op::Max), RuntimeError);
  EXPECT_THROW(reduce_host(x.data(), x.data(), 1, Dtype::DoubleInt, Op::Sum), RuntimeError);
  EXPECT_THROW(reduce_host(x.data(), x.data(), 1, Dtype::Int32, Op::MaxLoc), RuntimeError);
  EXPECT_TRUE(op_applies(Dtype::Int16, Op::Prod));
  EXPECT_FALSE(op_applies(Dtype::Half, Op::MinLoc));
  EXPECT_EQ(to_string(Dtype::LongDoubleInt), "long_double_int");
  EXPECT_EQ(to_string(Op::MaxLoc), "maxloc");
  EXPECT_FALSE(parse_dtype("int16"));  // not a benchmark type
}

TEST(ReduceHost, ReportsItsVariant) {
  const std::string_view variant = detail::reduce_host_variant();
  EXPECT_TRUE(variant == "avx2+f16c" || variant == "baseline") << variant;
#if defined(__x86_64__)
  __builtin_cpu_init();  // every AVX2 CPU also has F16C
  EXPECT_EQ(variant == "avx2+f16c", __builtin_cpu_supports("avx2") != 0);
#endif
  RecordProperty("variant", std::string(variant));
}

}  // namespace
}  // namespace cb::engine
