// Slow, obviously-correct reference arithmetic for the engine tests, written without
// the bit tricks of src/core/half.hpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

namespace cb::test {

// Rounds x to nearest-even in a binary format with `precision` significand bits (implicit
// bit included), smallest normal 2^min_normal_exp and largest finite max_finite; returns
// the rounded value (+-inf on overflow). Assumes the default rounding mode.
inline double round_to_format(double x, int precision, int min_normal_exp, double max_finite) {
  if (!std::isfinite(x) || x == 0) return x;
  int exp = 0;
  std::frexp(x, &exp);  // |x| in [2^(exp-1), 2^exp)
  // Below the normal range the quantum stays that of the smallest binade (subnormals).
  const int quantum_exp = std::max(exp, min_normal_exp + 1) - precision;
  const double rounded = std::nearbyint(std::ldexp(x, -quantum_exp));
  const double result = std::ldexp(rounded, quantum_exp);
  if (std::fabs(result) > max_finite) return std::copysign(HUGE_VAL, x);
  return result;
}

// binary16: 11 significand bits, smallest normal 2^-14, max 65504.
inline double round_to_half(double x) {
  return round_to_format(x, 11, -14, 65504.0);
}

// bfloat16: 8 significand bits, float's exponent range, max (2 - 2^-7) * 2^127.
inline double round_to_bf16(double x) {
  return round_to_format(x, 8, -126, std::ldexp(1.0, 128) - std::ldexp(1.0, 120));
}

}  // namespace cb::test
