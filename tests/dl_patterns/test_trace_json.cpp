// The collbench trace JSON: valid input, defaults, round trips and format detection.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "dl_patterns/trace.hpp"
#include "test_util.hpp"

namespace cb::dl {
namespace {

using nlohmann::json;
using testing::data_path;
using testing::TempFile;

json doc_with_ops(json ops) {
  return {{"schema", "collbench.trace/1"}, {"ops", std::move(ops)}};
}

TEST(TraceJson, ParsesEveryField) {
  const Trace t = load_trace(data_path("small.trace.json"));
  EXPECT_EQ(t.name, "two-steps");
  EXPECT_EQ(t.source, "recorder");
  EXPECT_EQ(t.world_size, 4);
  ASSERT_EQ(t.ops.size(), 4u);
  EXPECT_EQ(t.ops[0],
            (TraceOp{Coll::Allreduce, 1024, Dtype::Float, Op::Sum, 0, "fc.weight", 12.5, 0}));
  EXPECT_EQ(t.ops[1], (TraceOp{Coll::Bcast, 10, Dtype::Int64, Op::Sum, 3, "", 0, 0}));
  EXPECT_EQ(t.ops[3], (TraceOp{Coll::Reduce, 8, Dtype::Double, Op::Max, 1, "", 0, 1}));
  EXPECT_EQ(t.ops[3].bytes(), 64u);
  EXPECT_EQ(t.iterations(), 2);
}

TEST(TraceJson, DefaultsForOptionalFields) {
  const Trace t =
      parse_trace_json(doc_with_ops({{{"coll", "allreduce"}, {"count", 5}}}), "dir/x.json");
  EXPECT_EQ(t.name, "x");  // file stem
  EXPECT_EQ(t.source, "json:dir/x.json");
  EXPECT_EQ(t.world_size, 0);
  EXPECT_EQ(t.ops[0], (TraceOp{Coll::Allreduce, 5, Dtype::Float, Op::Sum, 0, "", 0, 0}));
  EXPECT_EQ(t.iterations(), 1);
}

TEST(TraceJson, BytesOnlyChoosesFloatOrChar) {
  const Trace t = parse_trace_json(doc_with_ops({{{"coll", "allreduce"}, {"bytes", 4096}},
                                                 {{"coll", "alltoall"}, {"bytes", 4097}}}),
                                   "t");
  EXPECT_EQ(t.ops[0].dtype, Dtype::Float);
  EXPECT_EQ(t.ops[0].count, 1024u);
  EXPECT_EQ(t.ops[1].dtype, Dtype::Char);
  EXPECT_EQ(t.ops[1].count, 4097u);
}

TEST(TraceJson, BytesWithDtypeOrCountMustAgree) {
  const Trace t = parse_trace_json(
      doc_with_ops({{{"coll", "allgather"}, {"bytes", 64}, {"dtype", "half"}},
                    {{"coll", "reduce_scatter"}, {"bytes", 64}, {"count", 8}, {"dtype", "double"}},
                    {{"coll", "allreduce"}, {"bytes", 64}, {"count", 16}}}),
      "t");
  EXPECT_EQ(t.ops[0].count, 32u);
  EXPECT_EQ(t.ops[0].dtype, Dtype::Half);
  EXPECT_EQ(t.ops[1].count, 8u);
  EXPECT_EQ(t.ops[2].dtype, Dtype::Float);
}

TEST(TraceJson, IterationsCountsDistinctSteps) {
  Trace t;
  EXPECT_EQ(t.iterations(), 0);
  t.ops.resize(5);
  EXPECT_EQ(t.iterations(), 1);
  t.ops[2].iteration = t.ops[3].iteration = 4;
  t.ops[4].iteration = 7;
  EXPECT_EQ(t.iterations(), 3);
}

Trace rich_trace() {
  Trace t;
  t.name = "rich";
  t.source = "model:resnet50";
  t.world_size = 8;
  t.ops = {{Coll::Allreduce, 1000, Dtype::Float, Op::Sum, 0, "fc.bias", 3.25, 0},
           {Coll::Reduce, 7, Dtype::BFloat16, Op::Min, 5, "", 0, 0},
           {Coll::Alltoall, 3, Dtype::Char, Op::Sum, 0, "emb \"a2a\"", 0, 1},
           {Coll::ReduceScatter, 9, Dtype::Int32, Op::Prod, 0, "", 1e-3, 1},
           {Coll::Bcast, 1, Dtype::Half, Op::Sum, 7, "", 0, 2}};
  // Every informational field too: a field the writer forgets is lost by --export-trace.
  t.ops[0].start_us = 12.5;
  t.ops[0].duration_us = 3;
  t.ops[0].comm_size = 4;
  t.ops[0].group = {0, 2, 5, 7};
  t.ops[0].pg = "mesh_shard";
  return t;
}

TEST(TraceJson, ToJsonRoundTrips) {
  const Trace t = rich_trace();
  const json j = to_json(t);
  EXPECT_EQ(j.at("schema"), "collbench.trace/1");
  EXPECT_EQ(j.at("ops")[1].at("op"), "min");
  EXPECT_FALSE(j.at("ops")[0].contains("op"));  // sum is the default
  const Trace back = parse_trace_json(j, "mem");
  Trace one_late_step = t;
  for (TraceOp& op : one_late_step.ops) op.iteration = 5;
  EXPECT_EQ(parse_trace_json(to_json(one_late_step), "mem").ops, one_late_step.ops);
  EXPECT_FALSE(to_json(Trace{"x", "y", 0, {TraceOp{}}}).at("ops")[0].contains("iteration"));
  EXPECT_EQ(back.name, t.name);
  EXPECT_EQ(back.source, t.source);
  EXPECT_EQ(back.world_size, t.world_size);
  EXPECT_EQ(back.ops, t.ops);
}

TEST(TraceJson, SaveAndLoadRoundTripsOneOpPerLine) {
  const Trace t = rich_trace();
  TempFile file("rich.json", "");
  save_trace(t, file.path());
  const Trace back = load_trace(file.path());
  EXPECT_EQ(back.ops, t.ops);
  EXPECT_EQ(back.world_size, 8);

  std::ifstream in(file.path());
  std::stringstream text;
  text << in.rdbuf();
  size_t op_lines = 0;
  for (std::string line; std::getline(text, line);)
    op_lines += line.find("\"coll\"") != std::string::npos;
  EXPECT_EQ(op_lines, t.ops.size());
}

TEST(TraceJson, SaveReportsUnwritablePath) {
  EXPECT_TRACE_ERROR(save_trace(rich_trace(), "/nonexistent-dir/x.json"),
                     "/nonexistent-dir/x.json: cannot open");
}

TEST(TraceJson, SaveRefusesAnEmptyTrace) {
  // The reader refuses "ops": [], so the writer must not produce it (the recorder on a rank
  // that issued no collective).
  TempFile file("empty.json", "");
  std::remove(file.path().c_str());
  EXPECT_TRACE_ERROR(save_trace(Trace{"app", "recorder", 2, {}}, file.path()),
                     "nothing to write: no operation");
  EXPECT_FALSE(std::ifstream(file.path()).good()) << "no file may be left behind";
}

TEST(TraceJson, LoadDetectsFormatByContent) {
  EXPECT_EQ(load_trace(data_path("small.trace.json")).source, "recorder");
  EXPECT_EQ(load_trace(data_path("allreduce_table.csv")).source,
            "csv:" + data_path("allreduce_table.csv"));
  EXPECT_EQ(load_trace(data_path("param_basic.json")).source,
            "param:" + data_path("param_basic.json"));
  // Content decides, not the extension; a byte-order mark and leading blanks are fine.
  TempFile csv_named_json("table.json", "\xEF\xBB\xBF\n  \n8,2\n");
  EXPECT_EQ(load_trace(csv_named_json.path()).ops.size(), 2u);
  TempFile json_named_txt(
      "t.txt", "\n  {\"schema\":\"collbench.trace/1\",\"ops\":[{\"coll\":\"bcast\",\"bytes\":1}]}");
  EXPECT_EQ(load_trace(json_named_txt.path()).ops[0].coll, Coll::Bcast);
}

}  // namespace
}  // namespace cb::dl
