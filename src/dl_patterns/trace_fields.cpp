#include "dl_patterns/trace_fields.hpp"

#include <climits>
#include <filesystem>
#include <optional>

namespace cb::dl::detail {
namespace {

std::optional<uint64_t> as_unsigned(const json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer() && v.get<int64_t>() >= 0)
    return static_cast<uint64_t>(v.get<int64_t>());
  return std::nullopt;
}

}  // namespace

void fail(const std::string& where, const std::string& what) {
  throw TraceError(where + ": " + what);
}

void field_error(const std::string& where, std::string_view field, const std::string& what) {
  fail(where, "field \"" + std::string(field) + "\": " + what);
}

std::string shown(const json& value) {
  // Replace invalid UTF-8 rather than throw: the message must always be produced.
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  constexpr size_t kMaxShown = 40;
  if (text.size() > kMaxShown) text = text.substr(0, kMaxShown) + "...";
  return text;
}

uint64_t positive_integer(const json& record, std::string_view field, const std::string& where) {
  const json& v = record.at(std::string(field));
  const auto n = as_unsigned(v);
  if (!n || *n == 0) field_error(where, field, "must be a positive integer (got " + shown(v) + ")");
  return *n;
}

int small_nonnegative_integer(const json& record, std::string_view field,
                              const std::string& where) {
  const json& v = record.at(std::string(field));
  const auto n = as_unsigned(v);
  if (!n) field_error(where, field, "must be a non-negative integer (got " + shown(v) + ")");
  if (*n > static_cast<uint64_t>(INT_MAX))
    field_error(where, field, "too large (" + shown(v) + ")");
  return static_cast<int>(*n);
}

std::string string_field(const json& record, std::string_view field, const std::string& where) {
  const json& v = record.at(std::string(field));
  if (!v.is_string()) field_error(where, field, "must be a string (got " + shown(v) + ")");
  return v.get<std::string>();
}

void check_op_size(size_t count, Dtype dtype, std::string_view field, const std::string& where) {
  if (count > kMaxOpBytes / dtype_size(dtype))
    field_error(where, field,
                "too large: " + std::to_string(count) + " x " + std::to_string(dtype_size(dtype)) +
                    " bytes exceeds the 1 TiB limit per operation");
}

TraceOp op_from_bytes(Coll coll, size_t bytes) {
  TraceOp op;
  op.coll = coll;
  op.dtype = bytes % dtype_size(Dtype::Float) == 0 ? Dtype::Float : Dtype::Char;
  op.count = bytes / dtype_size(op.dtype);
  return op;
}

std::string file_stem(const std::string& origin) {
  std::string stem = std::filesystem::path(origin).stem().string();
  return stem.empty() ? origin : stem;
}

}  // namespace cb::dl::detail
