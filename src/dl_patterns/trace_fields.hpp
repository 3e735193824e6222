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
Trace load_trace_file(const std::string& path, int world_hint);

// "dir/resnet50.trace.json" -> "resnet50.trace": the default trace name.
std::string file_stem(const std::string& origin);

}  // namespace cb::dl::detail
