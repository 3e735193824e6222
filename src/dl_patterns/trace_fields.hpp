// Internal to the trace readers: typed access to JSON fields that turns every
// malformed value into a TraceError naming where it is ("file: ops[3]: field ...").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "dl_patterns/trace.hpp"

namespace cb::dl::detail {

using nlohmann::json;

[[noreturn]] void fail(const std::string& where, const std::string& what);
[[noreturn]] void field_error(const std::string& where, std::string_view field,
                              const std::string& what);
// `value` as it appeared, shortened, for "(got ...)" in messages.
std::string shown(const json& value);

// Each checks the value of record[field] (which must exist) and throws field_error otherwise.
uint64_t positive_integer(const json& record, std::string_view field, const std::string& where);
int small_nonnegative_integer(const json& record, std::string_view field,
                              const std::string& where);  // 0 .. INT_MAX
std::string string_field(const json& record, std::string_view field, const std::string& where);

// Throws unless count elements of dtype fit in kMaxOpBytes.
void check_op_size(size_t count, Dtype dtype, std::string_view field, const std::string& where);
// An op given only in bytes: float elements when the size allows, else bytes (char).
TraceOp op_from_bytes(Coll coll, size_t bytes);

// load_trace(path), with the ranks of the job when the file's format may not say them
// (a Chakra ET in a folder of n per-rank files: its reduce_scatter and all-to-all shares).
// Also refuses a trace whose ranks disagree with its world size (check_ranks).
Trace load_trace_file(const std::string& path, int world_hint);

// What parse_trace_json refuses in a record, checked on a whole trace however it was read:
// a process-group rank or a root at or beyond world_size, a root beyond its group. An
// importer can be handed such a trace (a profiler trace whose distributedInfo.world_size is
// smaller than its "Process Group Ranks"); refusing it at load keeps the promise that every
// trace cb_replay loads can be written as collbench JSON and read back (--export-trace).
void check_ranks(const Trace& trace, const std::string& origin);

// "dir/resnet50.trace.json" -> "resnet50.trace": the default trace name.
std::string file_stem(const std::string& origin);

}  // namespace cb::dl::detail
