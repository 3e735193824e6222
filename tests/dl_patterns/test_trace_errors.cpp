// Malformed collbench traces: every class of mistake gives a TraceError that names the
// file, the op and the field, and nothing crashes.
#include <gtest/gtest.h>

#include "dl_patterns/trace.hpp"
#include "test_util.hpp"

namespace cb::dl {
namespace {

using nlohmann::json;
using testing::TempFile;
using testing::trace_error;

json good_op() {
  return {{"coll", "allreduce"}, {"count", 1024}, {"dtype", "float"}};
}

// Error from a trace whose ops[3] is good_op() with `field` set to `value` (null: removed).
std::string op_error(const std::string& field, const json& value) {
  json op = good_op();
  if (value.is_null())
    op.erase(field);
  else
    op[field] = value;
  const json doc = {{"schema", "collbench.trace/1"},
                    {"ops", {good_op(), good_op(), good_op(), op}}};
  return trace_error([&] { parse_trace_json(doc, "trace.json"); });
}

TEST(TraceErrors, MessageNamesFileOpAndField) {
  EXPECT_EQ(op_error("count", -5),
            "trace.json: ops[3]: field \"count\": must be a positive integer (got -5)");
}

TEST(TraceErrors, WrongTypes) {
  EXPECT_THAT_MESSAGE(op_error("count", "1024"),
                      "field \"count\": must be a positive integer (got \"1024\")");
  EXPECT_THAT_MESSAGE(op_error("count", 1.5),
                      "field \"count\": must be a positive integer (got 1.5)");
  EXPECT_THAT_MESSAGE(op_error("coll", 3), "field \"coll\": must be a string");
  EXPECT_THAT_MESSAGE(op_error("dtype", json::array()), "field \"dtype\": must be a string");
  EXPECT_THAT_MESSAGE(op_error("name", false), "field \"name\": must be a string");
  EXPECT_THAT_MESSAGE(op_error("compute_us", "fast"),
                      "field \"compute_us\": must be a non-negative number");
  EXPECT_THAT_MESSAGE(op_error("iteration", 0.5),
                      "field \"iteration\": must be a non-negative integer");
  const json not_object = {{"schema", "collbench.trace/1"}, {"ops", {good_op(), 7}}};
  EXPECT_TRACE_ERROR(parse_trace_json(not_object, "t.json"),
                     "t.json: ops[1]: must be an object (got 7)");
}

TEST(TraceErrors, NegativeAndZeroNumbers) {
  EXPECT_THAT_MESSAGE(op_error("count", 0), "field \"count\": must be a positive integer (got 0)");
  EXPECT_THAT_MESSAGE(op_error("bytes", -4096), "field \"bytes\": must be a positive integer");
  EXPECT_THAT_MESSAGE(op_error("compute_us", -1.0),
                      "field \"compute_us\": must be a non-negative number");
  EXPECT_THAT_MESSAGE(op_error("iteration", -1),
                      "field \"iteration\": must be a non-negative integer");
}

TEST(TraceErrors, HugeNumbers) {
  EXPECT_THAT_MESSAGE(op_error("count", uint64_t{1} << 62), "field \"count\": too large");
  EXPECT_THAT_MESSAGE(op_error("count", UINT64_MAX), "field \"count\": too large");
  EXPECT_THAT_MESSAGE(op_error("iteration", int64_t{1} << 40), "field \"iteration\": too large");
  json bytes_op = {{"coll", "allreduce"}, {"bytes", (uint64_t{1} << 40) + 4}};
  EXPECT_TRACE_ERROR(parse_trace_json({{"schema", "collbench.trace/1"}, {"ops", {bytes_op}}}, "t"),
                     "field \"bytes\": too large");
  // Beyond 64 bits the JSON reader produces a float: rejected as not an integer.
  TempFile file(
      "huge.json",
      R"({"schema":"collbench.trace/1","ops":[{"coll":"allreduce","count":99999999999999999999999}]})");
  EXPECT_TRACE_ERROR(load_trace(file.path()),
                     "ops[0]: field \"count\": must be a positive integer (got 9.99");
  // Beyond double range the JSON reader itself gives up.
  TempFile overflow("overflow.json",
                    R"({"schema":"collbench.trace/1","ops":[{"coll":"allreduce","count":1e400}]})");
  EXPECT_TRACE_ERROR(load_trace(overflow.path()),
                     "overflow.json: invalid JSON: number overflow parsing '1e400'");
}

TEST(TraceErrors, MissingFields) {
  EXPECT_THAT_MESSAGE(op_error("coll", nullptr), "ops[3]: field \"coll\": missing");
  json no_size = {{"coll", "allreduce"}, {"dtype", "float"}};
  EXPECT_TRACE_ERROR(parse_trace_json({{"schema", "collbench.trace/1"}, {"ops", {no_size}}}, "t"),
                     "t: ops[0]: needs \"count\" (with \"dtype\") or \"bytes\"");
  EXPECT_TRACE_ERROR(parse_trace_json({{"ops", {good_op()}}}, "t"), "t: field \"schema\": missing");
  EXPECT_TRACE_ERROR(parse_trace_json({{"schema", "collbench.trace/1"}}, "t"),
                     "t: field \"ops\": missing");
}

TEST(TraceErrors, UnknownNames) {
  EXPECT_THAT_MESSAGE(op_error("coll", "allscatter"),
                      "field \"coll\": unknown collective \"allscatter\" (one of: allreduce,");
  EXPECT_THAT_MESSAGE(op_error("coll", "none"), "unknown collective \"none\"");
  EXPECT_THAT_MESSAGE(op_error("dtype", "float8"),
                      "field \"dtype\": unknown dtype \"float8\" (one of: char,");
  EXPECT_THAT_MESSAGE(op_error("op", "avg"),
                      "field \"op\": unknown operator \"avg\" (one of: sum, prod, max, min)");
  EXPECT_THAT_MESSAGE(op_error("cout", 5),
                      "ops[3]: field \"cout\": unknown field (expected: coll, bytes");
  EXPECT_TRACE_ERROR(
      parse_trace_json({{"schema", "collbench.trace/1"}, {"ops", {good_op()}}, {"world", 2}}, "t"),
      "t: field \"world\": unknown field");
}

TEST(TraceErrors, FieldsThatDoNotApplyToTheCollective) {
  json bcast_op = {{"coll", "bcast"}, {"count", 4}, {"dtype", "float"}, {"op", "max"}};
  EXPECT_TRACE_ERROR(
      parse_trace_json({{"schema", "collbench.trace/1"}, {"ops", {bcast_op}}}, "t"),
      "field \"op\": only the reductions (allreduce, reduce, reduce_scatter[v]) have an op");
  EXPECT_THAT_MESSAGE(
      op_error("root", 1),
      "field \"root\": only rooted collectives (bcast, reduce, gather, scatter) have a root");
  json rooted = {{"coll", "reduce"}, {"count", 4}, {"dtype", "float"}, {"root", 4}};
  EXPECT_TRACE_ERROR(
      parse_trace_json({{"schema", "collbench.trace/1"}, {"world_size", 4}, {"ops", {rooted}}},
                       "t"),
      "t: ops[0]: field \"root\": must be below world_size 4");
}

TEST(TraceErrors, InconsistentSizes) {
  EXPECT_THAT_MESSAGE(op_error("bytes", 4000),
                      "field \"bytes\": 4000 disagrees with count x dtype size = 1024 x 4");
  json op = {{"coll", "allreduce"}, {"bytes", 6}, {"dtype", "int64"}};
  EXPECT_TRACE_ERROR(parse_trace_json({{"schema", "collbench.trace/1"}, {"ops", {op}}}, "t"),
                     "field \"bytes\": 6 is not a multiple of the int64 size");
}

TEST(TraceErrors, IterationsMustNotDecrease) {
  json later = good_op(), earlier = good_op();
  later["iteration"] = 2;
  earlier["iteration"] = 1;
  EXPECT_TRACE_ERROR(
      parse_trace_json({{"schema", "collbench.trace/1"}, {"ops", {later, earlier}}}, "t"),
      "t: ops[1]: field \"iteration\": must not decrease along the trace (previous op has 2)");
}

TEST(TraceErrors, TopLevelShape) {
  EXPECT_TRACE_ERROR(parse_trace_json(json::array(), "t"),
                     "t: a collbench trace must be a JSON object");
  EXPECT_TRACE_ERROR(parse_trace_json({{"schema", "collbench.trace/2"}, {"ops", {good_op()}}}, "t"),
                     "t: field \"schema\": unsupported \"collbench.trace/2\"");
  EXPECT_TRACE_ERROR(parse_trace_json({{"schema", 1}, {"ops", {good_op()}}}, "t"),
                     "field \"schema\": must be a string");
  EXPECT_TRACE_ERROR(parse_trace_json({{"schema", "collbench.trace/1"}, {"ops", "x"}}, "t"),
                     "t: field \"ops\": must be an array (got \"x\")");
  EXPECT_TRACE_ERROR(
      parse_trace_json({{"schema", "collbench.trace/1"}, {"ops", json::array()}}, "t"),
      "t: field \"ops\": is empty");
  EXPECT_TRACE_ERROR(
      parse_trace_json({{"schema", "collbench.trace/1"}, {"world_size", 0}, {"ops", {good_op()}}},
                       "t"),
      "field \"world_size\": must be a positive integer (got 0)");
  EXPECT_TRACE_ERROR(
      parse_trace_json({{"schema", "collbench.trace/1"}, {"world_size", -2}, {"ops", {good_op()}}},
                       "t"),
      "field \"world_size\": must be a non-negative integer (got -2)");
}

TEST(TraceErrors, FileLevelProblems) {
  EXPECT_TRACE_ERROR(load_trace("/nonexistent/trace.json"), "/nonexistent/trace.json: cannot open");
  TempFile empty("empty.json", "");
  EXPECT_TRACE_ERROR(load_trace(empty.path()), empty.path() + ": empty file");
  TempFile blank("blank.json", " \n\t\r\n");
  EXPECT_TRACE_ERROR(load_trace(blank.path()), ": empty file");
  TempFile truncated("truncated.json", "{\"schema\": \"collbench.trace/1\", \"ops\": [");
  EXPECT_TRACE_ERROR(load_trace(truncated.path()),
                     truncated.path() + ": invalid JSON: parse error at line 1");
  TempFile garbage_list("bad.json", "[1, 2,,]");
  EXPECT_TRACE_ERROR(load_trace(garbage_list.path()), ": invalid JSON:");
  // PyTorch's formats are read (test_trace_torch.cpp); empty ones say what is missing.
  TempFile et("et.json", "{\"schema\": \"1.0.1\", \"nodes\": []}");
  EXPECT_TRACE_ERROR(load_trace(et.path()), "no collective to replay in this execution trace");
  TempFile kineto("kineto.json", "{\"traceEvents\": []}");
  EXPECT_TRACE_ERROR(load_trace(kineto.path()), "no collective to replay in this profiler trace");
  TempFile binary("blob.bin", std::string("\x01\x02\x00\xff\xfe", 5));
  EXPECT_TRACE_ERROR(load_trace(binary.path()), "blob.bin: looks like a binary file");
  TempFile text_garbage("notes.txt", "hello world\nthis is not a trace\n");
  EXPECT_TRACE_ERROR(load_trace(text_garbage.path()),
                     "notes.txt:2: field \"size\": must be a positive integer");
}

}  // namespace
}  // namespace cb::dl
