#include <gtest/gtest.h>

#include <limits>

#include "core/errors.hpp"
#include "harness/sizes.hpp"

namespace cb {
namespace {

TEST(Sizes, ParsesPlainAndSuffixedBytes) {
  EXPECT_EQ(parse_bytes("0"), 0u);
  EXPECT_EQ(parse_bytes("4096"), 4096u);
  EXPECT_EQ(parse_bytes("64K"), 65536u);
  EXPECT_EQ(parse_bytes("64k"), 65536u);
  EXPECT_EQ(parse_bytes("4M"), 4u << 20);
  EXPECT_EQ(parse_bytes("4MiB"), 4u << 20);
  EXPECT_EQ(parse_bytes("1G"), size_t{1} << 30);
  EXPECT_EQ(parse_bytes("7B"), 7u);
}

TEST(Sizes, RejectsMalformedSizes) {
  for (const char* bad : {"", "K", "-1", "12Q", "1.5M", "4 M", "99999999999999999999"})
    EXPECT_THROW(parse_bytes(bad), UsageError) << bad;
  EXPECT_THROW(parse_bytes("17179869184G"), UsageError);  // overflows on the shift
}

TEST(Sizes, RangeFollowsOmbDashM) {
  const SizeRange def{1, 4u << 20};
  EXPECT_EQ(parse_size_range("128", def).min, 1u);
  EXPECT_EQ(parse_size_range("128", def).max, 128u);
  EXPECT_EQ(parse_size_range("2:128", def).min, 2u);
  EXPECT_EQ(parse_size_range("2:128", def).max, 128u);
  EXPECT_EQ(parse_size_range("1K:", def).min, 1024u);
  EXPECT_EQ(parse_size_range("1K:", def).max, 4u << 20);
  EXPECT_EQ(parse_size_range("0", {8, 64}).min, 0u);  // MAX below the default MIN
  EXPECT_THROW(parse_size_range("5:1", def), UsageError);
  EXPECT_THROW(parse_size_range(":5", def), UsageError);
  EXPECT_THROW(parse_size_range("1:2:3", def), UsageError);
  EXPECT_THROW(parse_size_range("", def), UsageError);
}

TEST(Sizes, SweepDoublesFromZeroAndMin) {
  EXPECT_EQ(size_sweep({0, 8}), (std::vector<size_t>{0, 1, 2, 4, 8}));
  EXPECT_EQ(size_sweep({3, 20}), (std::vector<size_t>{3, 6, 12}));
  EXPECT_EQ(size_sweep({64, 64}), (std::vector<size_t>{64}));
}

TEST(Sizes, SweepByFactorOrByStep) {
  SizeRange r{1, 1024};
  r.factor = 4;
  EXPECT_EQ(size_sweep(r), (std::vector<size_t>{1, 4, 16, 64, 256, 1024}));
  EXPECT_EQ(size_sweep_count(r), 6u);
  r = {0, 100};
  r.factor = 10;
  EXPECT_EQ(size_sweep(r), (std::vector<size_t>{0, 1, 10, 100}));
  r = {3, 20};
  r.step_bytes = 5;  // linear: the factor is not used
  EXPECT_EQ(size_sweep(r), (std::vector<size_t>{3, 8, 13, 18}));
  EXPECT_EQ(size_sweep_count(r), 4u);
  r = {0, 0};
  r.step_bytes = 7;
  EXPECT_EQ(size_sweep(r), (std::vector<size_t>{0}));
  // no overflow at the top of size_t
  const size_t top = std::numeric_limits<size_t>::max();
  r = {top - 2, top};
  r.step_bytes = 2;
  EXPECT_EQ(size_sweep(r), (std::vector<size_t>{top - 2, top}));
  r = {top / 2, top};
  r.factor = 3;
  EXPECT_EQ(size_sweep(r), (std::vector<size_t>{top / 2}));
  EXPECT_EQ(size_sweep_count({0, 8}), 5u);
  EXPECT_EQ(size_sweep_count({9, 8}), 0u);
}

TEST(Sizes, FormatsBinaryUnits) {
  EXPECT_EQ(format_bytes(8), "8 B");
  EXPECT_EQ(format_bytes(65536), "64 KiB");
  EXPECT_EQ(format_bytes(4u << 20), "4 MiB");
  EXPECT_EQ(format_bytes(1536), "1536 B");
}

}  // namespace
}  // namespace cb
