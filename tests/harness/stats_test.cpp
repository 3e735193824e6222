#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "harness/stats.hpp"

namespace cb {
namespace {

TEST(Stats, NearestRankPercentiles) {
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  EXPECT_EQ(percentile(v, 50), 50);
  EXPECT_EQ(percentile(v, 90), 90);
  EXPECT_EQ(percentile(v, 99), 99);
  EXPECT_EQ(percentile(v, 100), 100);
  EXPECT_EQ(percentile(v, 0.5), 1);
  const std::vector<double> three{1, 2, 3};
  EXPECT_EQ(percentile(three, 50), 2);
  EXPECT_EQ(percentile(three, 99), 3);
  EXPECT_EQ(percentile(std::vector<double>{}, 50), 0);
}

TEST(Stats, SummaryOfUnsortedSamples) {
  const Summary s = summarize({4, 1, 3, 2}, std::vector<double>{50, 75});
  EXPECT_EQ(s.n, 4u);
  EXPECT_DOUBLE_EQ(s.avg, 2.5);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 4);
  EXPECT_EQ(s.p50, 2);
  EXPECT_NEAR(s.stddev, std::sqrt(5.0 / 3.0), 1e-12);  // sample standard deviation
  ASSERT_EQ(s.tails.size(), 2u);
  EXPECT_EQ(s.tails[1].first, 75);
  EXPECT_EQ(s.tails[1].second, 3);
}

TEST(Stats, EmptyAndSingleSample) {
  EXPECT_EQ(summarize({}).n, 0u);
  const Summary one = summarize({7});
  EXPECT_EQ(one.avg, 7);
  EXPECT_EQ(one.stddev, 0);
  EXPECT_EQ(one.p99, 7);
}

TEST(Stats, JsonCarriesEveryFigure) {
  const nlohmann::json j = summarize({1, 2, 3}, std::vector<double>{99.9});
  for (const char* k : {"avg", "min", "max", "p50", "p90", "p99", "stddev", "n"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["tails"]["p99.9"], 3);
  EXPECT_EQ(percentile_key(50), "p50");
}

TEST(Stats, RepeatOddPassesReportTheMedianPass) {
  // Run order 30, 10, 20: the median pass is the third one (index 2).
  const PassSummary s = summarize_passes(std::vector<double>{30, 10, 20});
  EXPECT_EQ(s.passes, 3u);
  EXPECT_EQ(s.reported, 2u);
  EXPECT_EQ(s.median, 20);
  EXPECT_EQ(s.min, 10);
  EXPECT_EQ(s.max, 30);
  EXPECT_DOUBLE_EQ(s.spread_pct, 100.0);  // (30 - 10) / 20
  const PassSummary five = summarize_passes(std::vector<double>{5, 4, 1, 2, 3});
  EXPECT_EQ(five.reported, 4u);
  EXPECT_EQ(five.median, 3);
  EXPECT_NEAR(five.spread_pct, 400.0 / 3.0, 1e-12);
}

TEST(Stats, RepeatEvenPassesReportTheLowerMiddlePass) {
  // Sorted 1, 2, 4, 8: the median is (2 + 4) / 2 = 3, the reported pass the one of 2.
  const PassSummary s = summarize_passes(std::vector<double>{8, 4, 2, 1});
  EXPECT_EQ(s.passes, 4u);
  EXPECT_EQ(s.reported, 2u);
  EXPECT_DOUBLE_EQ(s.median, 3.0);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 8);
  EXPECT_NEAR(s.spread_pct, 700.0 / 3.0, 1e-12);
  const PassSummary two = summarize_passes(std::vector<double>{1.5, 0.5});
  EXPECT_EQ(two.reported, 1u);
  EXPECT_DOUBLE_EQ(two.median, 1.0);
  EXPECT_DOUBLE_EQ(two.spread_pct, 100.0);
}

TEST(Stats, RepeatTiesKeepRunOrderAndDegenerateInputs) {
  const PassSummary ties = summarize_passes(std::vector<double>{7, 7, 7});
  EXPECT_EQ(ties.reported, 1u);
  EXPECT_EQ(ties.spread_pct, 0);
  const PassSummary one = summarize_passes(std::vector<double>{2.5});
  EXPECT_EQ(one.passes, 1u);
  EXPECT_EQ(one.reported, 0u);
  EXPECT_EQ(one.median, 2.5);
  EXPECT_EQ(one.spread_pct, 0);
  EXPECT_EQ(summarize_passes(std::vector<double>{0, 0}).spread_pct, 0);  // no division by 0
  EXPECT_EQ(summarize_passes(std::vector<double>{}).passes, 0u);
}

// Tukey's fences: with quartiles 10 and 11 (IQR 1) only values beyond 8.5 and 12.5 outlie;
// too few passes flag nothing.
TEST(Stats, TukeyOutliersAreFlaggedByIndex) {
  const std::vector<double> times = {10, 11, 10.5, 30, 10, 11, 10.2, 1};
  EXPECT_EQ(tukey_outliers(times), (std::vector<size_t>{3, 7}));
  EXPECT_TRUE(tukey_outliers(std::vector<double>{10, 11, 10.5, 10.7}).empty());
  EXPECT_TRUE(tukey_outliers(std::vector<double>{1, 100, 1}).empty());
}

}  // namespace
// The sign test's interval, against the binomial tables: n = 6 is the smallest sample with
// a 95 % interval ([x1, x6], 96.9 %), n = 10 gives [x2, x9] (97.9 %), n = 20 [x6, x15]
// (95.9 %). The interval does not depend on the order the samples came in.
TEST(Stats, MedianIntervalIsTheSignTestsOrderStatistics) {
  EXPECT_FALSE(median_interval({1, 2, 3, 4, 5}).defined);
  const MedianInterval six = median_interval({6, 1, 5, 2, 4, 3});
  ASSERT_TRUE(six.defined);
  EXPECT_DOUBLE_EQ(six.lo, 1);
  EXPECT_DOUBLE_EQ(six.hi, 6);
  EXPECT_DOUBLE_EQ(six.median, 3.5);
  EXPECT_NEAR(six.confidence, 1 - 2.0 / 64, 1e-12);
  std::vector<double> ten;
  for (int i = 10; i >= 1; --i) ten.push_back(i);
  const MedianInterval t = median_interval(ten);
  EXPECT_DOUBLE_EQ(t.lo, 2);
  EXPECT_DOUBLE_EQ(t.hi, 9);
  EXPECT_NEAR(t.confidence, 1 - 2.0 * 11 / 1024, 1e-12);
  std::vector<double> twenty;
  for (int i = 1; i <= 20; ++i) twenty.push_back(i);
  const MedianInterval w = median_interval(twenty);
  EXPECT_DOUBLE_EQ(w.lo, 6);
  EXPECT_DOUBLE_EQ(w.hi, 15);
  EXPECT_GE(w.confidence, 0.95);
  EXPECT_LT(w.confidence, 0.97);
}

// Paired passes: the verdict reads the ratio's interval, and a pair that is truly equal
// (ratios straddling 1) is indistinguishable, never faster or slower.
TEST(Stats, PairedComparisonVerdicts) {
  const std::vector<double> base = {10, 11, 9, 10, 12, 10, 11, 10};
  std::vector<double> fast, slow, same;
  for (double b : base) {
    fast.push_back(b * 0.8);
    slow.push_back(b * 1.3);
  }
  same = {10.5, 10.4, 8.8, 10.2, 11.5, 9.9, 11.3, 9.7};  // ratios on both sides of 1
  EXPECT_EQ(compare_paired(fast, base).verdict, "faster");
  EXPECT_NEAR(compare_paired(fast, base).ratio.median, 0.8, 1e-12);
  EXPECT_EQ(compare_paired(slow, base).verdict, "slower");
  EXPECT_EQ(compare_paired(same, base).verdict, "indistinguishable");
  EXPECT_EQ(compare_paired(std::vector<double>(base.begin(), base.begin() + 5),
                           std::vector<double>(base.begin(), base.begin() + 5))
                .verdict,
            "too few passes");
}

}  // namespace cb
