// src/core/half.hpp against independent references: the compiler's _Float16 conversions
// (g++ on x86-64; test-only), the classic bfloat16 bit trick, and the numeric rounding
// model in reference.hpp.
#include "core/half.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "reference.hpp"

namespace cb {
namespace {

#if defined(__FLT16_MANT_DIG__)
constexpr bool kHaveFloat16 = true;
float float16_reference_to_float(uint16_t h) {
  return static_cast<float>(std::bit_cast<_Float16>(h));
}
uint16_t float16_reference_from_float(float f) {
  return std::bit_cast<uint16_t>(static_cast<_Float16>(f));
}
#else
constexpr bool kHaveFloat16 = false;
float float16_reference_to_float(uint16_t) {
  return 0;
}
uint16_t float16_reference_from_float(float) {
  return 0;
}
#endif

uint32_t bits_of(float f) {
  return std::bit_cast<uint32_t>(f);
}
float float_of(uint32_t u) {
  return std::bit_cast<float>(u);
}

bool is_half_nan(uint16_t h) {
  return (h & 0x7C00u) == 0x7C00u && (h & 0x03FFu) != 0;
}
bool is_bf16_nan(uint16_t b) {
  return (b & 0x7F80u) == 0x7F80u && (b & 0x007Fu) != 0;
}

// Half value decoded field by field, without bit tricks.
double half_value_from_fields(uint16_t h) {
  const int exp = (h >> 10) & 0x1F;
  const int mant = h & 0x3FF;
  const double sign = (h & 0x8000u) ? -1.0 : 1.0;
  if (exp == 0x1F) return sign * HUGE_VAL;  // NaNs are checked separately
  if (exp == 0) return sign * std::ldexp(mant, -24);
  return sign * std::ldexp(1024 + mant, exp - 25);
}

// What float_to_half promises for a NaN input: sign and top 10 payload bits kept, quiet
// NaN if those are all zero.
uint16_t expected_half_nan(float f) {
  const uint32_t u = bits_of(f);
  const uint32_t payload = (u >> 13) & 0x3FFu;
  return static_cast<uint16_t>(((u >> 16) & 0x8000u) | 0x7C00u | (payload ? payload : 0x200u));
}

// Checks float_to_half(f) against the numeric model and, where available, _Float16.
void expect_float_to_half_correct(float f) {
  const uint16_t got = float_to_half(f);
  if (std::isnan(f)) {
    ASSERT_EQ(got, expected_half_nan(f)) << std::hex << bits_of(f);
    return;
  }
  const double want = test::round_to_half(f);
  ASSERT_EQ(std::bit_cast<uint64_t>(half_value_from_fields(got)), std::bit_cast<uint64_t>(want))
      << "float bits 0x" << std::hex << bits_of(f) << " -> 0x" << got;
  if (kHaveFloat16) {
    ASSERT_EQ(got, float16_reference_from_float(f)) << "float bits 0x" << std::hex << bits_of(f);
  }
}

TEST(Half, AllValuesRoundTripThroughFloatExactly) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    ASSERT_EQ(float_to_half(half_to_float(static_cast<uint16_t>(h))), h) << std::hex << h;
  }
}

TEST(Half, ToFloatMatchesFieldDecodingAndFloat16) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const auto half = static_cast<uint16_t>(h);
    const float got = half_to_float(half);
    if (is_half_nan(half)) {
      // NaN: exponent all ones, payload shifted up unchanged, sign kept.
      const uint32_t want = ((h & 0x8000u) << 16) | 0x7F800000u | ((h & 0x3FFu) << 13);
      ASSERT_EQ(bits_of(got), want) << std::hex << h;
      continue;
    }
    ASSERT_EQ(std::bit_cast<uint64_t>(static_cast<double>(got)),
              std::bit_cast<uint64_t>(half_value_from_fields(half)))
        << std::hex << h;
    if (kHaveFloat16) {
      ASSERT_EQ(bits_of(got), bits_of(float16_reference_to_float(half))) << h;
    }
  }
}

TEST(Half, FromFloatKnownValues) {
  struct Case {
    float in;
    uint16_t want;
  };
  const Case cases[] = {
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
      {1.0f, 0x3C00},
      {-2.0f, 0xC000},
      {65504.0f, 0x7BFF},                          // largest finite
      {std::nextafter(65520.0f, 0.0f), 0x7BFF},    // just below the overflow tie
      {65520.0f, 0x7C00},                          // tie with an odd mantissa: to inf
      {1e9f, 0x7C00},                              // overflow
      {-1e9f, 0xFC00},                             //
      {std::ldexp(1.0f, -14), 0x0400},             // smallest normal
      {std::ldexp(1.0f, -24), 0x0001},             // smallest subnormal
      {std::ldexp(1.0f, -25), 0x0000},             // tie between 0 and 2^-24: even is 0
      {std::ldexp(1.5f, -25), 0x0001},             // above the tie
      {std::ldexp(3.0f, -25), 0x0002},             // tie between 1 and 2 quanta: even is 2
      {std::ldexp(1023.5f, -24), 0x0400},          // top subnormal tie rounds up to normal
      {1.0f + std::ldexp(1.0f, -11), 0x3C00},      // tie, lsb even: down
      {1.0f + 3 * std::ldexp(1.0f, -11), 0x3C02},  // tie, lsb odd: up
      {std::numeric_limits<float>::infinity(), 0x7C00},
      {-std::numeric_limits<float>::infinity(), 0xFC00},
      {std::numeric_limits<float>::denorm_min(), 0x0000},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(float_to_half(c.in), c.want) << c.in;
    expect_float_to_half_correct(c.in);
  }
  EXPECT_TRUE(is_half_nan(float_to_half(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(is_half_nan(float_to_half(float_of(0x7F800001u))));  // payload only in low bits
  EXPECT_EQ(float_to_half(float_of(0xFFC00000u)), 0xFE00);         // sign kept
}

// Every finite half, its float neighbours, and the exact midpoints (ties) to the next
// half up, plus one float ulp either side of each tie.
TEST(Half, FromFloatAroundEveryHalfAndEveryTie) {
  for (uint32_t h = 0; h < 0x7C00; ++h) {
    const float v = half_to_float(static_cast<uint16_t>(h));
    // The next half up; past the largest finite one, 65536 is where rounding reaches inf.
    const float up = h + 1 == 0x7C00 ? 65536.0f : half_to_float(static_cast<uint16_t>(h + 1));
    const float tie = (v + up) / 2;  // exact: 12 significant bits at most
    for (const float f : {v, std::nextafter(v, 0.0f), std::nextafter(v, up), tie,
                          std::nextafter(tie, 0.0f), std::nextafter(tie, up)}) {
      expect_float_to_half_correct(f);
      expect_float_to_half_correct(-f);
    }
  }
}

TEST(Half, FromFloatStridedOverAllFloats) {
  constexpr uint64_t kStride = 997;  // prime: visits every exponent and many mantissas
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += kStride) {
    expect_float_to_half_correct(float_of(static_cast<uint32_t>(u)));
  }
}

TEST(Half, FromFloatRandomAroundHalfRange) {
  std::mt19937 rng(12345);
  // Float exponents 100..145 span below the smallest subnormal up past overflow.
  std::uniform_int_distribution<uint32_t> exponent(100, 145), mantissa(0, (1u << 23) - 1);
  for (int i = 0; i < 1'000'000; ++i) {
    const uint32_t sign = (i & 1) ? 0x80000000u : 0u;
    expect_float_to_half_correct(float_of(sign | (exponent(rng) << 23) | mantissa(rng)));
  }
}

// ---- bfloat16 ----

// The widely used reference conversion (as in TensorFlow/PyTorch), branchy on purpose.
uint16_t bf16_reference(float f) {
  uint32_t u = bits_of(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);
  const uint32_t lsb = (u >> 16) & 1u;
  u += 0x7FFFu + lsb;
  return static_cast<uint16_t>(u >> 16);
}

void expect_float_to_bf16_correct(float f) {
  const uint16_t got = float_to_bf16(f);
  ASSERT_EQ(got, bf16_reference(f)) << "float bits 0x" << std::hex << bits_of(f);
  if (!std::isnan(f)) {
    ASSERT_EQ(std::bit_cast<uint64_t>(static_cast<double>(bf16_to_float(got))),
              std::bit_cast<uint64_t>(test::round_to_bf16(f)))
        << "float bits 0x" << std::hex << bits_of(f);
  } else {
    ASSERT_TRUE(is_bf16_nan(got) && (got & 0x0040u) &&
                (got & 0x8000u) == ((bits_of(f) >> 16) & 0x8000u));
  }
}

TEST(Bf16, ToFloatIsTheTopHalfOfAFloat) {
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    ASSERT_EQ(bits_of(bf16_to_float(static_cast<uint16_t>(b))), b << 16);
  }
}

TEST(Bf16, AllValuesRoundTripNaNsBecomeQuiet) {
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    const auto bf = static_cast<uint16_t>(b);
    const uint16_t want = is_bf16_nan(bf) ? static_cast<uint16_t>(bf | 0x0040u) : bf;
    ASSERT_EQ(float_to_bf16(bf16_to_float(bf)), want) << std::hex << b;
  }
}

TEST(Bf16, FromFloatKnownValues) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16(float_of(0x3F808000u)), 0x3F80);              // tie, lsb even: down
  EXPECT_EQ(float_to_bf16(float_of(0x3F818000u)), 0x3F82);              // tie, lsb odd: up
  EXPECT_EQ(float_to_bf16(float_of(0x3F808001u)), 0x3F81);              // above the tie
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7F80);  // rounds to inf
  EXPECT_EQ(float_to_bf16(float_of(0x7F7F7FFFu)), 0x7F7F);              // largest that stays finite
  EXPECT_EQ(float_to_bf16(float_of(0x00008000u)), 0x0000);              // subnormal tie to even
  EXPECT_EQ(float_to_bf16(float_of(0x80018000u)), 0x8002);  // negative subnormal tie, odd
  EXPECT_EQ(float_to_bf16(float_of(0x7F800001u)), 0x7FC0);  // NaN never rounds to inf
  EXPECT_EQ(float_to_bf16(float_of(0xFFFFFFFFu)), 0xFFFF);  // NaN cannot carry out
}

// Every bf16 value with the discarded low half at zero, just below/at/above the tie, and
// at the extremes.
TEST(Bf16, FromFloatAroundEveryValueAndEveryTie) {
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    for (const uint32_t low : {0x0000u, 0x0001u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu}) {
      expect_float_to_bf16_correct(float_of((b << 16) | low));
    }
  }
}

TEST(Bf16, FromFloatStridedOverAllFloats) {
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 997) {
    expect_float_to_bf16_correct(float_of(static_cast<uint32_t>(u)));
  }
}

// The conversions are meant to be used in loops; make sure whole arrays agree with the
// scalar calls (guards against a miscompiled vectorised form).
TEST(HalfArrays, VectorisedLoopsMatchScalarCalls) {
  std::vector<float> floats(4096 + 7);
  std::mt19937 rng(7);
  for (float& f : floats) f = float_of(static_cast<uint32_t>(rng()));
  std::vector<uint16_t> halves(floats.size()), bf16s(floats.size());
  for (size_t i = 0; i < floats.size(); ++i) {
    halves[i] = float_to_half(floats[i]);
    bf16s[i] = float_to_bf16(floats[i]);
  }
  for (size_t i = 0; i < floats.size(); ++i) {
    volatile float f = floats[i];  // keeps this check scalar
    ASSERT_EQ(halves[i], float_to_half(f));
    ASSERT_EQ(bf16s[i], float_to_bf16(f));
  }
}

}  // namespace
}  // namespace cb
