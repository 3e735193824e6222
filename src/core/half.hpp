// IEEE binary16 ("half") and bfloat16 held as raw uint16_t bits, converted to and from
// float with round-to-nearest-even. Every function is branch-free integer/float arithmetic
// plus selects, so loops over arrays of them auto-vectorise (no table, no F16C required);
// they are forced inline so that a large caller never ends up calling them per element.
// Results do not depend on the FPU's denormal flushing (FTZ/DAZ) modes.
#pragma once

#include <bit>
#include <cstdint>

namespace cb {
namespace half_detail {

// Selects with a mask rather than ?:. With the default -ftrapping-math, g++ will not
// if-convert (and so not vectorise) a loop in which a float add/sub is needed on only one
// side of a condition; masking keeps that arithmetic unconditional.
[[gnu::always_inline]] inline uint32_t select(bool condition, uint32_t if_true, uint32_t if_false) {
  const uint32_t mask = 0u - static_cast<uint32_t>(condition);
  return (if_true & mask) | (if_false & ~mask);
}

}  // namespace half_detail

// Exact: every half value, NaN payloads included, is representable as a float.
[[gnu::always_inline]] inline float half_to_float(uint16_t h) {
  constexpr uint32_t kExpMask = 0x7C00u << 13;            // half exponent field, in float position
  constexpr uint32_t kRebias = (127u - 15u) << 23;        // half exponent bias 15 -> float bias 127
  constexpr uint32_t kInfNanAdjust = (128u - 16u) << 23;  // max half exponent -> 255
  constexpr uint32_t kMinNormalBits = 113u << 23;         // float 2^-14, the smallest normal half

  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t shifted = static_cast<uint32_t>(h & 0x7FFFu) << 13;
  const uint32_t exp = shifted & kExpMask;
  const uint32_t normal = shifted + kRebias;
  const uint32_t inf_nan = normal + kInfNanAdjust;
  // A subnormal m * 2^-24 is built as (1 + m/1024) * 2^-14 - 2^-14: both operands are
  // normal floats, so the result is exact even when the FPU flushes denormals (DAZ/FTZ).
  const float subnormal =
      std::bit_cast<float>(shifted + kMinNormalBits) - std::bit_cast<float>(kMinNormalBits);
  const uint32_t finite = half_detail::select(exp == 0, std::bit_cast<uint32_t>(subnormal), normal);
  const uint32_t magnitude = half_detail::select(exp == kExpMask, inf_nan, finite);
  return std::bit_cast<float>(magnitude | sign);
}

// Round to nearest, ties to even. Overflow gives +-inf, tiny values become half subnormals
// (or +-0). NaN stays NaN keeping its top 10 payload bits, so half -> float -> half is
// exact for all 65536 values; a NaN whose kept payload would be zero becomes quiet 0x7E00.
[[gnu::always_inline]] inline uint16_t float_to_half(float f) {
  constexpr uint32_t kFloatInf = 0xFFu << 23;
  constexpr uint32_t kHalfOverflow = (127u + 16u) << 23;  // 65536.0f: beyond it only inf/NaN
  constexpr uint32_t kHalfMinNormal = 113u << 23;         // 2^-14
  // Adding 0.5 aligns the half-subnormal quantum (2^-24) with the float's last mantissa
  // bit, so the FPU's own round-to-nearest-even does the rounding. (Inputs the FPU might
  // flush as denormal are far below 2^-25 and round to zero either way.)
  constexpr uint32_t kSubnormalMagicBits = ((127u - 15u) + (23u - 10u) + 1u) << 23;
  constexpr uint32_t kRebias = static_cast<uint32_t>(15 - 127) << 23;  // wraps, on purpose

  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t abs = bits & 0x7FFFFFFFu;

  // Normal: drop 13 mantissa bits adding 0xFFF + (kept lsb) for ties-to-even; a carry out
  // of the mantissa correctly bumps the exponent, up to inf.
  const uint32_t normal = (abs + kRebias + 0xFFFu + ((abs >> 13) & 1u)) >> 13;
  const uint32_t subnormal = std::bit_cast<uint32_t>(std::bit_cast<float>(abs) +
                                                     std::bit_cast<float>(kSubnormalMagicBits)) -
                             kSubnormalMagicBits;
  const uint32_t nan_payload = (abs >> 13) & 0x3FFu;
  const uint32_t nan = 0x7C00u | (nan_payload != 0 ? nan_payload : 0x200u);
  const uint32_t inf_nan = abs > kFloatInf ? nan : 0x7C00u;

  const uint32_t finite = half_detail::select(abs < kHalfMinNormal, subnormal, normal);
  const uint32_t magnitude = half_detail::select(abs >= kHalfOverflow, inf_nan, finite);
  return static_cast<uint16_t>(magnitude | sign);
}

// Exact: bfloat16 is the top half of a float.
[[gnu::always_inline]] inline float bf16_to_float(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

// Round to nearest, ties to even (overflow carries into inf). NaN keeps its sign and top
// payload bits and is made quiet, so it can never round into inf.
[[gnu::always_inline]] inline uint16_t float_to_bf16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint32_t rounded = (bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16;
  const uint32_t quiet_nan = (bits >> 16) | 0x0040u;
  const bool is_nan = (bits & 0x7FFFFFFFu) > 0x7F800000u;
  return static_cast<uint16_t>(is_nan ? quiet_nan : rounded);
}

}  // namespace cb
