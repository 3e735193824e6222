#include <gtest/gtest.h>

#include <cmath>

#include "harness/options.hpp"
#include "harness/progress.hpp"

namespace cb {
namespace {

TEST(Progress, FormatsDurations) {
  EXPECT_EQ(format_duration(0), "0s");
  EXPECT_EQ(format_duration(0.4), "0s");
  EXPECT_EQ(format_duration(42.6), "43s");
  EXPECT_EQ(format_duration(59.4), "59s");
  EXPECT_EQ(format_duration(60), "1m00s");
  EXPECT_EQ(format_duration(185), "3m05s");
  EXPECT_EQ(format_duration(3599), "59m59s");
  EXPECT_EQ(format_duration(3600), "1h00m");
  EXPECT_EQ(format_duration(3 * 3600 + 125), "3h02m");
  EXPECT_EQ(format_duration(-1), "?");
  EXPECT_EQ(format_duration(std::nan("")), "?");
}

TEST(Progress, EstimatesFromTheRateSoFar) {
  EXPECT_LT(remaining_seconds(5, 0, 100), 0);            // nothing done: no estimate
  EXPECT_DOUBLE_EQ(remaining_seconds(10, 25, 100), 30);  // a quarter in 10 s: 30 s left
  EXPECT_DOUBLE_EQ(remaining_seconds(10, 100, 100), 0);
  EXPECT_DOUBLE_EQ(remaining_seconds(10, 120, 100), 0);  // never negative
}

TEST(Progress, WorkGrowsWithBytesAndIterations) {
  Options o;
  o.iterations = 1000;
  o.warmup = 100;
  o.iterations_large = 100;
  o.warmup_large = 10;
  // Up to 8 KiB ten times the iterations: 4 B costs about as much as 64 KiB.
  EXPECT_DOUBLE_EQ(point_work(o, 0), 1100.0 * 8192);
  EXPECT_DOUBLE_EQ(point_work(o, 65536), 110.0 * (65536 + 8192));
  EXPECT_GT(point_work(o, 1 << 20), 10 * point_work(o, 65536));
  o.repeat = 3;  // every pass counts
  EXPECT_DOUBLE_EQ(point_work(o, 0), 3 * 1100.0 * 8192);
}

TEST(Progress, ShowsSizesInShort) {
  EXPECT_EQ(progress_bytes(4), "4 B");
  EXPECT_EQ(progress_bytes(65536), "64 KiB");
  EXPECT_EQ(progress_bytes(1536), "1.5 KiB");
  EXPECT_EQ(progress_bytes(102228128), "97.5 MiB");
}

TEST(Progress, LineNamesSizeCountsTimeAndEstimate) {
  ProgressState s;
  s.what = "64 KiB";
  s.done = 12;
  s.total = 24;
  s.elapsed_s = 42;
  s.remaining_s = 70;
  EXPECT_EQ(progress_line(s), "collbench: 64 KiB, 12/24 done, 42s elapsed, about 1m10s left");
  s.pass = 1;
  s.passes = 3;
  EXPECT_EQ(progress_line(s),
            "collbench: 64 KiB, 12/24 done, pass 2/3, 42s elapsed, about 1m10s left");
  ProgressState first;
  first.what = "4 B";
  first.total = 5;
  EXPECT_EQ(progress_line(first), "collbench: 4 B, 0/5 done, 0s elapsed");  // no estimate yet
}

TEST(Progress, DisabledDrawsNothing) {
  testing::internal::CaptureStderr();
  {
    Progress p(false, {1, 2, 3}, 1);
    p.show(0, 0, "4 B");
    p.clear();
    p.show(1, 0, "8 B");
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  Options o;
  EXPECT_FALSE(Progress::wanted(true, o));  // stderr is captured here: not a terminal
  o.progress = ProgressSetting::On;
  EXPECT_TRUE(Progress::wanted(true, o));    // --progress: into a pipe too
  EXPECT_FALSE(Progress::wanted(false, o));  // only rank 0 draws
  o.progress = ProgressSetting::Off;
  EXPECT_FALSE(Progress::wanted(true, o));  // -q
}

TEST(Progress, EnabledRewritesOneLineAndErasesIt) {
  testing::internal::CaptureStderr();
  {
    Progress p(true, {1, 1}, 1);
    p.show(0, 0, "64 KiB");
    p.show(1, 0, "1 MiB");
  }  // the destructor erases the line
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.find('\n'), std::string::npos) << err;  // never a new line
  EXPECT_EQ(err.front(), '\r');
  EXPECT_NE(err.find("collbench: 64 KiB, 0/2 done"), std::string::npos) << err;
  EXPECT_NE(err.find("collbench: 1 MiB, 1/2 done"), std::string::npos) << err;
  EXPECT_NE(err.find("left"), std::string::npos) << err;  // an estimate after the first
  EXPECT_EQ(err.back(), '\r');
  const size_t blank = err.rfind('\r', err.size() - 2);
  EXPECT_EQ(err.substr(blank + 1, err.size() - blank - 2).find_first_not_of(' '),
            std::string::npos)
      << err;  // the last thing written is blanks over the line
}

}  // namespace
}  // namespace cb
