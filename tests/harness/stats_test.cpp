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

}  // namespace
}  // namespace cb
