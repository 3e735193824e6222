// cb_replay's figures: latency statistics, the per-size table, and the step accounting
// (exposed communication, overlap, bus bandwidth).
#include <gtest/gtest.h>

#include "dl_patterns/replay_stats.hpp"

namespace cb::dl {
namespace {

ReplayMessage message(Coll coll, size_t count) {
  ReplayMessage m;
  m.coll = coll;
  m.count = count;  // float: 4 B each
  return m;
}

LatencyStats stats(std::initializer_list<double> samples) {
  LatencyStats l;
  for (double us : samples) l.add(us);
  return l;
}

TEST(ReplayStats, LatencyStatsKeepSumMinMaxAndCount) {
  const LatencyStats l = stats({3, 1, 8});
  EXPECT_DOUBLE_EQ(l.avg_us(), 4);
  EXPECT_DOUBLE_EQ(l.min_us, 1);
  EXPECT_DOUBLE_EQ(l.max_us, 8);
  EXPECT_DOUBLE_EQ(l.samples, 3);
  EXPECT_DOUBLE_EQ(LatencyStats{}.avg_us(), 0);
}

TEST(ReplayStats, SizeTableGroupsByCollectiveAndSizeLargestFirst) {
  const std::vector<ReplayMessage> msgs = {message(Coll::Allreduce, 1), message(Coll::Allreduce, 2),
                                           message(Coll::Bcast, 2), message(Coll::Allreduce, 2)};
  const std::vector<SizeRow> rows =
      size_table(msgs, {stats({10}), stats({20, 40}), stats({5}), stats({30})});
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].coll, Coll::Allreduce);
  EXPECT_EQ(rows[0].bytes, 8u);
  EXPECT_EQ(rows[0].per_step, 2u);
  EXPECT_DOUBLE_EQ(rows[0].latency.avg_us(), 30);  // (20 + 40 + 30) / 3
  EXPECT_DOUBLE_EQ(rows[0].latency.min_us, 20);
  EXPECT_DOUBLE_EQ(rows[0].latency.max_us, 40);
  EXPECT_EQ(rows[1].bytes, 4u);
  EXPECT_EQ(rows[1].per_step, 1u);
  EXPECT_EQ(rows[2].coll, Coll::Bcast);

  const std::vector<std::string> lines = size_table_lines(rows);
  ASSERT_EQ(lines.size(), 2 + rows.size());
  for (const std::string& line : lines) EXPECT_EQ(line.rfind("# ", 0), 0u) << line;
  EXPECT_NE(lines[2].find("allreduce"), std::string::npos);
  EXPECT_NE(lines[2].find("30.00"), std::string::npos);
  EXPECT_EQ(lines[1].find("Per step"), std::string::npos);

  // --steps: the counts are the table's; a column gives them per training step.
  const std::vector<std::string> per_step = size_table_lines(rows, 4);
  ASSERT_EQ(per_step.size(), lines.size());
  EXPECT_NE(per_step[0].find("Count: in the table's 4 steps"), std::string::npos);
  EXPECT_NE(per_step[1].find("Count  Per step"), std::string::npos);
  EXPECT_NE(per_step[2].find("  0.50 "), std::string::npos) << per_step[2];  // 2 over 4 steps
}

TEST(ReplayStats, ExposedAndOverlap) {
  StepFigures f = step_figures(100, 60, 50, 0);
  EXPECT_DOUBLE_EQ(f.exposed_us, 40);
  EXPECT_DOUBLE_EQ(f.overlap_pct, 20);  // 40 of 50 us of communication stayed exposed
  f = step_figures(100, 0, 100, 0);     // no compute: nothing hidden
  EXPECT_DOUBLE_EQ(f.overlap_pct, 0);
  f = step_figures(60, 60, 50, 0);  // fully hidden
  EXPECT_DOUBLE_EQ(f.overlap_pct, 100);
  f = step_figures(55, 60, 50, 0);  // step below compute (timer noise): clamped
  EXPECT_DOUBLE_EQ(f.exposed_us, 0);
  EXPECT_DOUBLE_EQ(f.overlap_pct, 100);
  f = step_figures(200, 60, 50, 0);  // slower than compute + pure: clamped at 0
  EXPECT_DOUBLE_EQ(f.overlap_pct, 0);
  f = step_figures(10, 0, 0, 1e6);
  EXPECT_DOUBLE_EQ(f.overlap_pct, 0);
  EXPECT_DOUBLE_EQ(f.busbw_GBps, 0);
}

TEST(ReplayStats, BusBandwidthUsesEachCollectivesFactor) {
  const std::vector<ReplayMessage> ar = {message(Coll::Allreduce, 250)};  // 1000 B
  EXPECT_DOUBLE_EQ(bus_bytes(ar, 2), 1000);                               // 2(n-1)/n = 1
  EXPECT_DOUBLE_EQ(bus_bytes(ar, 4), 1500);
  EXPECT_DOUBLE_EQ(bus_bytes({message(Coll::Bcast, 250)}, 4), 1000);
  EXPECT_DOUBLE_EQ(bus_bytes({message(Coll::Alltoall, 250)}, 4), 3000);  // 4 blocks x 3/4
  EXPECT_DOUBLE_EQ(bus_bytes(ar, 1), 0);
  // 1000 bus bytes in 1 us = 1 GB/s.
  EXPECT_DOUBLE_EQ(step_figures(5, 0, 1, 1000).busbw_GBps, 1);
}

}  // namespace
}  // namespace cb::dl
