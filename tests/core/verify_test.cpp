// -c's agreement across ranks (issue 25): the hash of a result's bits and the ranks that
// differ from rank 0, and the order-sensitive inputs whose reduction depends on the order
// of the contributions (so a backend that reduces in a different order on different ranks
// gives them different bits).
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/types.hpp"
#include "core/verify.hpp"

namespace cb {
namespace {

std::vector<std::byte> bytes_of(size_t n, uint8_t seed) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::byte(static_cast<uint8_t>(seed + i * 37));
  return v;
}

TEST(BitsHash, EqualBitsHashAlikeAndAnyFlippedBitChangesIt) {
  for (size_t n : {0, 1, 7, 8, 9, 64, 1000, 4099}) {
    const std::vector<std::byte> a = bytes_of(n, 3), b = bytes_of(n, 3);
    EXPECT_EQ(bits_hash(a.data(), n), bits_hash(b.data(), n)) << n;
    for (size_t i = 0; i < n; i += (n > 64 ? 61 : 1)) {
      for (int bit : {0, 7}) {
        std::vector<std::byte> c = a;
        c[i] ^= std::byte(1u << bit);
        EXPECT_NE(bits_hash(a.data(), n), bits_hash(c.data(), n)) << n << " byte " << i;
      }
    }
  }
  // The length counts: zeros of different lengths differ.
  const std::vector<std::byte> zeros(16);
  EXPECT_NE(bits_hash(zeros.data(), 8), bits_hash(zeros.data(), 16));
  EXPECT_NE(bits_hash(zeros.data(), 3), bits_hash(zeros.data(), 4));
}

TEST(BitsHash, DifferingRanksNamesEveryRankUnlikeRankZero) {
  const std::vector<std::byte> same = bytes_of(256, 1);
  std::vector<std::byte> other = same;
  other[200] ^= std::byte{1};  // one bit of one element: a last-place rounding difference
  const uint64_t h = bits_hash(same.data(), same.size());
  const uint64_t g = bits_hash(other.data(), other.size());
  EXPECT_TRUE(differing_ranks(std::vector<uint64_t>{h, h, h}).empty());
  EXPECT_TRUE(differing_ranks(std::vector<uint64_t>{h}).empty());
  EXPECT_EQ(differing_ranks(std::vector<uint64_t>{h, g, h, g}), (std::vector<int>{1, 3}));
  // Rank 0 alone differing: every other rank is named (rank 0 is the reference).
  EXPECT_EQ(differing_ranks(std::vector<uint64_t>{g, h, h}), (std::vector<int>{1, 2}));
  EXPECT_EQ(rank_list({1, 3}), "1, 3");
  EXPECT_EQ(rank_list({1, 2, 3, 4}, 2), "1, 2, ... (4 in all)");
}

TEST(OrderSensitive, OnlyFloatingPointSumsAndProducts) {
  for (Dtype dt : {Dtype::Float, Dtype::Double, Dtype::Half, Dtype::BFloat16}) {
    EXPECT_TRUE(order_sensitive(dt, Op::Sum));
    EXPECT_TRUE(order_sensitive(dt, Op::Prod));
    EXPECT_FALSE(order_sensitive(dt, Op::Max));
    EXPECT_FALSE(order_sensitive(dt, Op::Min));
  }
  for (Dtype dt : {Dtype::Char, Dtype::Int32, Dtype::Int64})
    for (Op op : {Op::Sum, Op::Prod, Op::Max, Op::Min}) EXPECT_FALSE(order_sensitive(dt, op));
}

// Reduces element i of every rank's order-sensitive input in the given rank order, rounding
// to dt after each step (as a backend reducing in dt does), and returns the bits.
uint64_t reduce_in_order(Dtype dt, Op op, int n, size_t i, const std::vector<int>& order) {
  std::vector<std::byte> acc(8), in(8);
  store_element(acc.data(), 0, dt, order_sensitive_value(dt, op, order[0], n, i));
  for (size_t k = 1; k < order.size(); ++k) {
    const double v = order_sensitive_value(dt, op, order[k], n, i);
    store_element(in.data(), 0, dt, v);
    const double a = load_element(acc.data(), 0, dt), b = load_element(in.data(), 0, dt);
    store_element(acc.data(), 0, dt, op == Op::Sum ? a + b : a * b);
  }
  uint64_t bits = 0;
  for (size_t b = 0; b < dtype_size(dt); ++b)
    bits |= static_cast<uint64_t>(std::to_integer<uint8_t>(acc[b])) << (8 * b);
  return bits;
}

TEST(OrderSensitive, InputsAreExactFiniteAndTheirReductionDependsOnTheOrder) {
  constexpr size_t kElements = 600;
  for (Dtype dt : {Dtype::Float, Dtype::Double, Dtype::Half, Dtype::BFloat16}) {
    for (Op op : {Op::Sum, Op::Prod}) {
      for (int n : {3, 4, 7, 16}) {
        std::vector<std::byte> in(kElements * dtype_size(dt));
        for (int r = 0; r < n; ++r) {
          fill_order_sensitive(dt, op, r, n, in.data(), kElements);
          for (size_t i = 0; i < kElements; ++i) {
            const double v = order_sensitive_value(dt, op, r, n, i);
            ASSERT_TRUE(std::isfinite(v) && v != 0);
            ASSERT_EQ(load_element(in.data(), i, dt), v) << "exact in the dtype";
          }
        }
        std::vector<int> forward, backward, rotated;
        for (int r = 0; r < n; ++r) {
          forward.push_back(r);
          backward.push_back(n - 1 - r);
          rotated.push_back((r + 1) % n);  // a ring starting at rank 1
        }
        size_t differ = 0;
        for (size_t i = 0; i < kElements; ++i) {
          const uint64_t f = reduce_in_order(dt, op, n, i, forward);
          differ += f != reduce_in_order(dt, op, n, i, backward) ||
                    f != reduce_in_order(dt, op, n, i, rotated);
        }
        // Many elements, not a rare one: a backend that orders differently per rank shows.
        EXPECT_GT(differ, kElements / 4) << to_string(dt) << " " << to_string(op) << " n=" << n;
      }
    }
  }
}

TEST(OrderSensitive, TwoRanksCannotDisagree) {
  // a + b == b + a in IEEE arithmetic: at 2 ranks the pass compares bits that must agree
  // even for a backend without a fixed order (it still catches one that corrupts a rank).
  for (size_t i = 0; i < 100; ++i)
    EXPECT_EQ(reduce_in_order(Dtype::Float, Op::Sum, 2, i, {0, 1}),
              reduce_in_order(Dtype::Float, Op::Sum, 2, i, {1, 0}));
}

}  // namespace
}  // namespace cb
