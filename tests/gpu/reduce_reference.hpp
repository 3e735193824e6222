// Test data and comparison shared by the reduction tests on the GPU
// (reduce_kernel_test.cpp) and on the host emulation (reduce_emulation_test.cu):
// random elements with special values mixed in, and a bit-exact comparison in which only
// NaNs produced by floating Sum/Prod may differ (in payload), as reduce.hpp documents.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "core/verify.hpp"

namespace cb::gpu::test {

using Bytes = std::vector<std::byte>;

// Interesting bit patterns per dtype: NaNs (quiet, signalling, negative), infinities,
// signed zeros, subnormals, extremes, one.
inline std::vector<uint64_t> specials(Dtype dt) {
  switch (dt) {
    case Dtype::Float:
      return {0x7FC00000, 0xFFC00001, 0x7F800001, 0x7F800000, 0xFF800000, 0x00000000,
              0x80000000, 0x00000001, 0x807FFFFF, 0x7F7FFFFF, 0x3F800000};
    case Dtype::Double:
      return {0x7FF8000000000000, 0xFFF8000000000001, 0x7FF0000000000001, 0x7FF0000000000000,
              0xFFF0000000000000, 0x0000000000000000, 0x8000000000000000, 0x0000000000000001,
              0x800FFFFFFFFFFFFF, 0x7FEFFFFFFFFFFFFF, 0x3FF0000000000000};
    case Dtype::Half:
      return {0x7E00, 0xFE01, 0x7C01, 0x7C00, 0xFC00, 0x0000,
              0x8000, 0x0001, 0x83FF, 0x7BFF, 0x3C00};
    case Dtype::BFloat16:
      return {0x7FC0, 0xFFC1, 0x7F81, 0x7F80, 0xFF80, 0x0000,
              0x8000, 0x0001, 0x807F, 0x7F7F, 0x3F80};
    case Dtype::Char:
      return {0x80, 0x7F, 0xFF, 0x00, 0x01};
    case Dtype::Int32:
      return {0x80000000, 0x7FFFFFFF, 0xFFFFFFFF, 0x0, 0x1};
    case Dtype::Int64:
      return {0x8000000000000000, 0x7FFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF, 0x0, 0x1};
    default:  // the engine's own types (core/types.hpp): never benchmarked
      break;
  }
  return {0};
}

// A mix of random bits, moderate values (where rounding matters), specials and small
// integers (ties for Max/Min, zeros).
inline Bytes random_elements(Dtype dt, size_t count, uint64_t seed) {
  const size_t width = dtype_size(dt);
  const auto special = specials(dt);
  Bytes out(count * width);
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < count; ++i) {
    const uint64_t r = rng();
    switch (r % 4) {
      case 0:
        std::memcpy(out.data() + i * width, &r, width);
        break;
      case 1:
        store_element(out.data(), i, dt, static_cast<double>(static_cast<int>(r >> 8) % 2001) / 8);
        break;
      case 2: {
        const uint64_t bits = special[(r >> 8) % special.size()];
        std::memcpy(out.data() + i * width, &bits, width);
        break;
      }
      default:
        store_element(out.data(), i, dt, static_cast<double>(static_cast<int>((r >> 8) % 7) - 3));
    }
  }
  return out;
}

inline bool is_nan(Dtype dt, const std::byte* p) {
  uint64_t bits = 0;
  std::memcpy(&bits, p, dtype_size(dt));
  switch (dt) {
    case Dtype::Float:
      return (bits & 0x7FFFFFFF) > 0x7F800000;
    case Dtype::Double:
      return (bits & 0x7FFFFFFFFFFFFFFF) > 0x7FF0000000000000;
    case Dtype::Half:
      return (bits & 0x7FFF) > 0x7C00;
    case Dtype::BFloat16:
      return (bits & 0x7FFF) > 0x7F80;
    default:
      return false;
  }
}

inline std::string hex(const std::byte* p, size_t width) {
  std::ostringstream s;
  s << "0x" << std::hex;
  for (size_t b = width; b-- > 0;)
    s << (static_cast<unsigned>(p[b]) >> 4) << (static_cast<unsigned>(p[b]) & 15);
  return s.str();
}

// Bit-exact comparison; a NaN from Sum/Prod matches any NaN.
inline void expect_same(const Bytes& got, const Bytes& want, Dtype dt, Op op,
                        const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  const size_t width = dtype_size(dt);
  const bool arithmetic = op == Op::Sum || op == Op::Prod;
  size_t wrong = 0, first = 0;
  for (size_t i = 0; i < got.size() / width; ++i) {
    const std::byte* g = got.data() + i * width;
    const std::byte* w = want.data() + i * width;
    if (std::memcmp(g, w, width) == 0) continue;
    if (arithmetic && is_nan(dt, g) && is_nan(dt, w)) continue;
    if (wrong++ == 0) first = i;
  }
  EXPECT_EQ(wrong, 0u) << what << ": first wrong element " << first << ": got "
                       << hex(got.data() + first * width, width) << ", host "
                       << hex(want.data() + first * width, width);
}

}  // namespace cb::gpu::test
