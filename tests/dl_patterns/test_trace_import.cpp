// Importers: CSV allreduce tables and PARAM basic traces, valid and malformed.
#include <gtest/gtest.h>

#include <sstream>

#include "dl_patterns/trace.hpp"
#include "test_util.hpp"

namespace cb::dl {
namespace {

using nlohmann::json;
using testing::data_path;
using testing::trace_error;

Trace csv(const std::string& text, const std::string& origin = "t.csv") {
  std::istringstream in(text);
  return import_csv(in, origin);
}

std::string csv_error(const std::string& text) {
  return trace_error([&] { csv(text); });
}

// ---- CSV ----

TEST(ImportCsv, ExpandsRowsIntoAllreduces) {
  const Trace t = load_trace(data_path("allreduce_table.csv"));
  EXPECT_EQ(t.name, "allreduce_table");
  ASSERT_EQ(t.ops.size(), 6u);  // 2 + 1 + 3
  EXPECT_EQ(t.ops[0], (TraceOp{Coll::Allreduce, 1024, Dtype::Float, Op::Sum, 0, "", 0, 0}));
  EXPECT_EQ(t.ops[1], t.ops[0]);
  EXPECT_EQ(t.ops[2].bytes(), 102'400'000u);
  EXPECT_EQ(t.ops[3],
            (TraceOp{Coll::Allreduce, 7, Dtype::Char, Op::Sum, 0, "", 0, 0}));  // quoted, odd size
  EXPECT_EQ(t.iterations(), 1);
}

TEST(ImportCsv, ToleratesCrlfBlanksCommentsAndExtraColumns) {
  const Trace t =
      csv("# comment\r\n\r\nsize,count\r\n  16 , 1 , x, y\r\n   # indented comment\n8,2\n");
  ASSERT_EQ(t.ops.size(), 3u);
  EXPECT_EQ(t.ops[0].count, 4u);
  EXPECT_EQ(t.ops[2].count, 2u);
}

TEST(ImportCsv, ErrorsNameFileLineAndField) {
  EXPECT_EQ(csv_error("size,count\n4,1\nabc,2\n"),
            "t.csv:3: field \"size\": must be a positive integer (got \"abc\")");
  EXPECT_THAT_MESSAGE(csv_error("4096\n"), "t.csv:1: field \"count\": missing");
  EXPECT_THAT_MESSAGE(csv_error("4096,\n"), "t.csv:1: field \"count\": missing");
  EXPECT_THAT_MESSAGE(csv_error("4096,0\n"),
                      "t.csv:1: field \"count\": must be a positive integer (got \"0\")");
  EXPECT_THAT_MESSAGE(csv_error("-4096,1\n"),
                      "t.csv:1: field \"size\": must be a positive integer (got \"-4096\")");
  EXPECT_THAT_MESSAGE(csv_error("4096.5,1\n"), "field \"size\": must be a positive integer");
  EXPECT_THAT_MESSAGE(csv_error("4 KB,1\n"), "field \"size\": must be a positive integer");
  EXPECT_THAT_MESSAGE(csv_error(",1\n"), "t.csv:1: field \"size\": missing");
  // A second header-like row is a mistake, not a header.
  EXPECT_THAT_MESSAGE(csv_error("size,count\nbytes,n\n"),
                      "t.csv:2: field \"size\": must be a positive integer");
}

TEST(ImportCsv, HugeNumbersAreRejectedWithoutAllocating) {
  EXPECT_THAT_MESSAGE(csv_error("99999999999999999999999,1\n"),
                      "t.csv:1: field \"size\": too large");
  EXPECT_THAT_MESSAGE(csv_error("2199023255552,1\n"),
                      "field \"size\": too large: exceeds the 1 TiB limit");
  EXPECT_THAT_MESSAGE(csv_error("4,1000000000000\n"),
                      "t.csv:1: field \"count\": the table would call more than 1048576");
  // fuzz_trace: "10,2400000" took more than 10 s and 2 GB, in rows or in one.
  EXPECT_THAT_MESSAGE(csv_error("10,2400000\n"), "t.csv:1: field \"count\": the table would call");
  EXPECT_THAT_MESSAGE(csv_error("4,1048576\n8,1\n"),
                      "t.csv:2: field \"count\": the table would call more than 1048576");
}

TEST(ImportCsv, EmptyInputsAreErrors) {
  EXPECT_THAT_MESSAGE(csv_error(""), "t.csv: no operations");
  EXPECT_THAT_MESSAGE(csv_error("size,count\n# nothing measured\n"), "t.csv: no operations");
}

// ---- PARAM basic ----

TEST(ImportParam, MapsCollectivesSizesAndDtypes) {
  const Trace t = load_trace(data_path("param_basic.json"));
  EXPECT_EQ(t.name, "param_basic");
  EXPECT_EQ(t.world_size, 4);
  ASSERT_EQ(t.ops.size(), 7u);  // init, gemm and wait are skipped
  EXPECT_EQ(t.ops[0], (TraceOp{Coll::Allreduce, 1000, Dtype::Float, Op::Sum, 0, "bucket 0", 0, 0}));
  EXPECT_EQ(t.ops[1], (TraceOp{Coll::Bcast, 16, Dtype::Int64, Op::Sum, 2, "", 0, 0}));
  EXPECT_EQ(t.ops[2],
            (TraceOp{Coll::Alltoall, 1024, Dtype::BFloat16, Op::Sum, 0, "", 0, 0}));  // per peer
  EXPECT_EQ(t.ops[3],
            (TraceOp{Coll::Allgather, 256, Dtype::Half, Op::Sum, 0, "", 0, 0}));  // sent per rank
  EXPECT_EQ(t.ops[4],
            (TraceOp{Coll::ReduceScatter, 256, Dtype::Double, Op::Sum, 0, "", 0, 0}));  // received
  EXPECT_EQ(t.ops[5].coll, Coll::Barrier);                                              // no size
  EXPECT_EQ(t.ops[5].count, 0u);
  EXPECT_EQ(t.ops[6], (TraceOp{Coll::Alltoall, 2, Dtype::Char, Op::Sum, 0, "", 0,
                               0}));  // v: mean, rounded down
}

TEST(ImportParam, AcceptsNameVariantsAndMarkerStacks) {
  const json records = {{{"comms", "AllReduce"},
                         {"in_msg_size", 3},
                         {"out_msg_size", 3},
                         {"dtype", "Int"},
                         {"markers", {"## step ##", "bucket 2"}}},
                        {{"comms", "all_gather_base"},
                         {"in_msg_size", 5},
                         {"out_msg_size", 10},
                         {"dtype", "unsigned char"},
                         {"markers", "ag"}},
                        {{"comms", "reduce"},
                         {"in_msg_size", 1},
                         {"out_msg_size", 1},
                         {"dtype", "FLOAT64"},
                         {"root", nullptr}}};
  const Trace t = import_param_basic(records, "r0.json");
  ASSERT_EQ(t.ops.size(), 3u);
  EXPECT_EQ(t.ops[0].name, "## step ##/bucket 2");
  EXPECT_EQ(t.ops[0].dtype, Dtype::Int32);
  EXPECT_EQ(t.ops[1].coll, Coll::Allgather);
  EXPECT_EQ(t.ops[1].dtype, Dtype::Char);
  EXPECT_EQ(t.ops[1].name, "ag");
  EXPECT_EQ(t.ops[2].dtype, Dtype::Double);
  EXPECT_EQ(t.ops[2].root, 0);
  EXPECT_EQ(t.world_size, 0);
}

TEST(ImportParam, RoundTripsThroughToParamBasic) {
  Trace t;
  t.name = "rt";
  t.world_size = 8;
  t.ops = {{Coll::Allreduce, 1000, Dtype::Float, Op::Sum, 0, "bucket 0", 0, 0},
           {Coll::Alltoall, 3, Dtype::Half, Op::Sum, 0, "", 0, 0},
           {Coll::Allgather, 5, Dtype::Int64, Op::Sum, 0, "", 0, 0},
           {Coll::ReduceScatter, 7, Dtype::BFloat16, Op::Sum, 0, "", 0, 0},
           {Coll::Bcast, 9, Dtype::Char, Op::Sum, 6, "", 0, 0},
           {Coll::Reduce, 2, Dtype::Double, Op::Sum, 1, "", 0, 0}};
  const json records = to_param_basic(t);
  EXPECT_EQ(records[1].at("in_msg_size"), 24);  // elements, not bytes: 3 per peer x 8
  EXPECT_EQ(records[2].at("out_msg_size"), 40);
  EXPECT_EQ(records[3].at("in_msg_size"), 56);
  EXPECT_EQ(import_param_basic(records, "rt.json").ops, t.ops);

  t.world_size = 0;  // alltoall sizes cannot be written without it
  EXPECT_TRACE_ERROR(to_param_basic(t), "rt: ops[1]: world_size is needed");
}

std::string param_error(json record) {
  return trace_error([&] {
    import_param_basic(json::array({{{"comms", "barrier"}}, std::move(record)}), "rank0.json");
  });
}

json param_record() {
  return {{"comms", "all_reduce"},
          {"in_msg_size", 100},
          {"out_msg_size", 100},
          {"dtype", "Float"},
          {"world_size", 4}};
}

json with(json rec, const std::string& field, json value) {
  if (value.is_null())
    rec.erase(field);
  else
    rec[field] = std::move(value);
  return rec;
}

TEST(ImportParam, ErrorsNameFileRecordAndField) {
  EXPECT_EQ(param_error(with(param_record(), "in_msg_size", -1)),
            "rank0.json: record[1]: field \"in_msg_size\": must be a positive integer (got -1)");
  EXPECT_THAT_MESSAGE(param_error(with(param_record(), "in_msg_size", nullptr)),
                      "record[1]: field \"in_msg_size\": missing");
  EXPECT_THAT_MESSAGE(param_error(with(param_record(), "in_msg_size", "100")),
                      "must be a positive integer");
  EXPECT_THAT_MESSAGE(param_error(with(param_record(), "in_msg_size", 1e300)),
                      "must be a positive integer");
  EXPECT_THAT_MESSAGE(param_error(with(param_record(), "in_msg_size", uint64_t{1} << 62)),
                      "field \"in_msg_size\": too large");
  EXPECT_THAT_MESSAGE(param_error(with(param_record(), "dtype", "short")),
                      "record[1]: field \"dtype\": unknown dtype \"short\"");
  EXPECT_THAT_MESSAGE(param_error(with(param_record(), "dtype", nullptr)),
                      "field \"dtype\": missing");
  EXPECT_THAT_MESSAGE(param_error(with(param_record(), "dtype", 4)),
                      "field \"dtype\": must be a string");
  EXPECT_THAT_MESSAGE(param_error(with(param_record(), "comms", "send")),
                      "field \"comms\": unsupported collective \"send\"");
  EXPECT_THAT_MESSAGE(param_error(with(param_record(), "comms", 1)),
                      "field \"comms\": must be a string");
  EXPECT_THAT_MESSAGE(param_error(with(param_record(), "world_size", 0)),
                      "field \"world_size\": must be a positive");
  EXPECT_THAT_MESSAGE(param_error(json("all_reduce")),
                      "rank0.json: record[1]: must be an object (got \"all_reduce\")");
}

TEST(ImportParam, CollectiveSpecificErrors) {
  json a2a = with(with(param_record(), "comms", "all_to_all"), "world_size", nullptr);
  EXPECT_THAT_MESSAGE(param_error(a2a),
                      "field \"world_size\": missing: needed to split all_to_all per peer");
  EXPECT_THAT_MESSAGE(
      param_error(with(with(param_record(), "comms", "all_to_all"), "in_msg_size", 3)),
      "field \"in_msg_size\": smaller than world_size");
  EXPECT_THAT_MESSAGE(param_error(with(with(param_record(), "comms", "broadcast"), "root", 4)),
                      "field \"root\": must be below world_size 4");
  const json two_groups = {param_record(), with(param_record(), "world_size", 2)};
  EXPECT_TRACE_ERROR(import_param_basic(two_groups, "r.json"),
                     "r.json: record[1]: field \"world_size\": 2 differs from earlier records (4)");
}

TEST(ImportParam, TracesWithoutCollectivesAreErrors) {
  EXPECT_TRACE_ERROR(import_param_basic(json::array(), "r.json"), "r.json: no collective records");
  EXPECT_TRACE_ERROR(import_param_basic({{{"compute", "gemm"}}, {{"comms", "wait"}}}, "r.json"),
                     "r.json: no collective records");
  EXPECT_TRACE_ERROR(import_param_basic(json::object(), "r.json"),
                     "r.json: a PARAM basic trace must be a JSON list");
}

}  // namespace
}  // namespace cb::dl
