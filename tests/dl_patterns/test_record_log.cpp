// The recorder's pure part: per-rank file names, gaps between calls as compute, and the
// optional recorder fields of the trace format.
#include <gtest/gtest.h>

#include "dl_patterns/record_log.hpp"
#include "test_util.hpp"

namespace cb::dl {
namespace {

using nlohmann::json;
using testing::TempFile;

TraceOp allreduce(size_t count) {
  TraceOp op;
  op.count = count;
  op.name = "MPI_Allreduce";
  op.comm_size = 2;
  return op;
}

TEST(RecordLog, OneFilePerRank) {
  EXPECT_EQ(rank_trace_path("out.json", 0), "out.rank0.json");
  EXPECT_EQ(rank_trace_path("dir/x.trace.json", 13), "dir/x.trace.rank13.json");
  EXPECT_EQ(rank_trace_path("out", 1), "out.rank1.json");
  EXPECT_EQ(rank_trace_path("out.JSON", 2), "out.JSON.rank2.json");
}

TEST(RecordLog, GapsBecomeComputeAndTimesCountFromInit) {
  CallLog log(10.0);
  log.add(allreduce(4), 10.001, 10.003);
  log.add(allreduce(8), 10.0035, 10.004);
  log.add(allreduce(16), 10.004, 10.005);  // back to back: no compute
  const Trace t = log.trace("app", 2);
  EXPECT_EQ(t.source, "recorder");
  EXPECT_EQ(t.world_size, 2);
  ASSERT_EQ(t.ops.size(), 3u);
  EXPECT_NEAR(t.ops[0].compute_us, 1000, 1e-6);
  EXPECT_NEAR(*t.ops[0].start_us, 1000, 1e-6);
  EXPECT_NEAR(*t.ops[0].duration_us, 2000, 1e-6);
  EXPECT_NEAR(t.ops[1].compute_us, 500, 1e-6);
  EXPECT_NEAR(*t.ops[1].start_us, 3500, 1e-6);
  EXPECT_NEAR(t.ops[2].compute_us, 0, 1e-6);
  EXPECT_EQ(log.dropped(), 0u);
}

TEST(RecordLog, RecorderFieldsRoundTrip) {
  CallLog log(0);
  log.add(allreduce(4), 0.5, 0.75);
  TempFile file("rec.json", "");
  save_trace(log.trace("app", 2), file.path());
  const Trace back = load_trace(file.path());
  ASSERT_EQ(back.ops.size(), 1u);
  EXPECT_EQ(back.ops[0], log.trace("app", 2).ops[0]);
  EXPECT_EQ(back.ops[0].comm_size, 2);
  EXPECT_DOUBLE_EQ(*back.ops[0].duration_us, 250000);
  // Traces without them stay as they were.
  EXPECT_FALSE(to_json(Trace{"x", "y", 0, {TraceOp{}}}).at("ops")[0].contains("start_us"));
}

TEST(RecordLog, RecorderFieldsAreChecked) {
  const auto error = [](const char* field, const json& value) {
    json op = {{"coll", "allreduce"}, {"count", 4}};
    op[field] = value;
    return testing::trace_error([&] {
      parse_trace_json({{"schema", "collbench.trace/1"}, {"ops", {op}}}, "r.json");
    });
  };
  EXPECT_THAT_MESSAGE(error("start_us", -1),
                      "r.json: ops[0]: field \"start_us\": must be a non-negative");
  EXPECT_THAT_MESSAGE(error("duration_us", "5"), "field \"duration_us\"");
  EXPECT_THAT_MESSAGE(error("comm_size", 0), "field \"comm_size\": must be a positive integer");
  EXPECT_THAT_MESSAGE(error("comm_size", 1.5), "field \"comm_size\"");
}

}  // namespace
}  // namespace cb::dl
