// collbench trace JSON: reading (with precise errors), writing, and format detection.
#include "dl_patterns/trace.hpp"

#include "core/coll_spec.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>

#include "dl_patterns/trace_fields.hpp"

namespace cb::dl {
namespace {

using namespace detail;
using nlohmann::json;

constexpr std::string_view kTopFields[] = {"schema", "name", "source", "world_size", "ops"};
constexpr std::string_view kOpFields[] = {
    "coll",       "bytes",     "count",    "dtype",       "op",        "root",  "name",
    "compute_us", "iteration", "start_us", "duration_us", "comm_size", "group", "pg"};
constexpr std::string_view kCollChoices =
    "allreduce, bcast, alltoall, allgather, reduce_scatter, reduce, barrier, alltoallv";

// Unknown fields are rejected so that a typo ("cout") is not silently ignored.
template <size_t N>
void reject_unknown_fields(const json& record, const std::string_view (&known)[N],
                           const std::string& where) {
  for (const auto& item : record.items()) {
    bool found = false;
    for (std::string_view k : known) found = found || item.key() == k;
    if (found) continue;
    std::string list;
    for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    field_error(where, item.key(), "unknown field (expected: " + list + ")");
  }
}

Coll coll_field(const json& rec, const std::string& where) {
  if (!rec.contains("coll"))
    field_error(where, "coll", "missing (one of: " + std::string(kCollChoices) + ")");
  const std::string name = string_field(rec, "coll", where);
  const auto coll = parse_coll(name);
  if (!coll || *coll == Coll::None)
    field_error(where, "coll",
                "unknown collective \"" + name + "\" (one of: " + std::string(kCollChoices) + ")");
  return *coll;
}

// Size: "bytes", or "count" (+ "dtype", default float), or both, which must agree.
void read_size(const json& rec, const std::string& where, TraceOp& op) {
  std::optional<Dtype> dtype;
  if (rec.contains("dtype")) {
    const std::string name = string_field(rec, "dtype", where);
    dtype = parse_dtype(name);
    if (!dtype)
      field_error(where, "dtype",
                  "unknown dtype \"" + name + "\" (one of: " + dtype_choices() + ")");
  }
  const bool has_count = rec.contains("count"), has_bytes = rec.contains("bytes");
  if (!has_count && !has_bytes) fail(where, "needs \"count\" (with \"dtype\") or \"bytes\"");
  if (has_count) {
    op.dtype = dtype.value_or(Dtype::Float);
    op.count = positive_integer(rec, "count", where);
    check_op_size(op.count, op.dtype, "count", where);
  }
  if (!has_bytes) return;
  const uint64_t bytes = positive_integer(rec, "bytes", where);
  if (bytes > kMaxOpBytes)
    field_error(where, "bytes", "too large: exceeds the 1 TiB limit per operation");
  if (has_count) {
    if (op.bytes() != bytes)
      field_error(where, "bytes",
                  std::to_string(bytes) + " disagrees with count x dtype size = " +
                      std::to_string(op.count) + " x " + std::to_string(dtype_size(op.dtype)));
  } else if (dtype) {
    if (bytes % dtype_size(*dtype) != 0)
      field_error(where, "bytes",
                  std::to_string(bytes) + " is not a multiple of the " +
                      std::string(to_string(*dtype)) + " size");
    op.dtype = *dtype;
    op.count = bytes / dtype_size(*dtype);
  } else {
    const TraceOp sized = op_from_bytes(op.coll, bytes);
    op.dtype = sized.dtype;
    op.count = sized.count;
  }
}

double microseconds(const json& rec, std::string_view field, const std::string& where) {
  const json& v = rec.at(std::string(field));
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
    field_error(where, field,
                "must be a non-negative number of microseconds (got " + shown(v) + ")");
  return v.get<double>();
}

TraceOp parse_op_record(const json& rec, const std::string& where, int world_size) {
  if (!rec.is_object()) fail(where, "must be an object (got " + shown(rec) + ")");
  reject_unknown_fields(rec, kOpFields, where);
  TraceOp op;
  op.coll = coll_field(rec, where);
  if (op.coll != Coll::Barrier) {
    read_size(rec, where, op);
  } else {  // no data: a size, if given, must say so
    for (const char* field : {"count", "bytes"})
      if (rec.contains(field) &&
          !(rec[field].is_number_unsigned() && rec[field].get<uint64_t>() == 0))
        field_error(where, field,
                    "a barrier moves no data: omit it or give 0 (got " + shown(rec[field]) + ")");
  }
  if (rec.contains("op")) {
    if (!coll_reduces(op.coll))
      field_error(where, "op",
                  "only the reductions (allreduce, reduce, reduce_scatter[v]) have an op");
    const std::string name = string_field(rec, "op", where);
    const auto parsed = parse_op(name);
    if (!parsed)
      field_error(where, "op", "unknown operator \"" + name + "\" (one of: " + op_choices() + ")");
    op.op = *parsed;
  }
  if (rec.contains("root")) {
    if (!coll_is_rooted(op.coll))
      field_error(where, "root",
                  "only rooted collectives (bcast, reduce, gather, scatter) have a root");
    op.root = small_nonnegative_integer(rec, "root", where);
    if (world_size > 0 && op.root >= world_size)
      field_error(where, "root", "must be below world_size " + std::to_string(world_size));
  }
  if (rec.contains("name")) op.name = string_field(rec, "name", where);
  if (rec.contains("compute_us")) op.compute_us = microseconds(rec, "compute_us", where);
  if (rec.contains("iteration")) op.iteration = small_nonnegative_integer(rec, "iteration", where);
  if (rec.contains("start_us")) op.start_us = microseconds(rec, "start_us", where);
  if (rec.contains("duration_us")) op.duration_us = microseconds(rec, "duration_us", where);
  if (rec.contains("comm_size")) {
    op.comm_size = small_nonnegative_integer(rec, "comm_size", where);
    if (op.comm_size == 0) field_error(where, "comm_size", "must be a positive integer (got 0)");
  }
  if (rec.contains("group")) {
    const json& g = rec.at("group");
    const auto bad = [&](const std::string& why) { field_error(where, "group", why); };
    if (!g.is_array() || g.empty())
      bad("must be a non-empty list of ranks (got " + g.dump().substr(0, 40) + ")");
    for (const json& r : g) {
      if (!r.is_number_integer() || r.get<int64_t>() < 0 || r.get<int64_t>() >= (1 << 24))
        bad("ranks must be integers from 0 (got " + r.dump().substr(0, 40) + ")");
      const int rank = r.get<int>();
      if (!op.group.empty() && rank <= op.group.back()) bad("ranks must increase");
      if (world_size > 0 && rank >= world_size)
        bad("rank " + std::to_string(rank) + " is not below world_size " +
            std::to_string(world_size));
      op.group.push_back(rank);
    }
    if (coll_is_rooted(op.coll) && op.root >= static_cast<int>(op.group.size()))
      field_error(where, "root",
                  "must be below the group's size " + std::to_string(op.group.size()));
  }
  if (rec.contains("pg")) {
    op.pg = string_field(rec, "pg", where);
    if (op.pg.empty()) field_error(where, "pg", "must be a non-empty name (absent: none)");
  }
  return op;
}

// Both json and ordered_json (for readable files): same fields, chosen order.
template <typename Json>
Json op_to(const TraceOp& op, bool with_iteration) {
  Json j;
  j["coll"] = std::string(to_string(op.coll));
  if (op.coll != Coll::Barrier) {  // a barrier has no size
    j["count"] = op.count;
    j["dtype"] = std::string(to_string(op.dtype));
  }
  if (coll_reduces(op.coll) && op.op != Op::Sum) j["op"] = std::string(to_string(op.op));
  if (coll_is_rooted(op.coll)) j["root"] = op.root;
  if (!op.name.empty()) j["name"] = op.name;
  if (op.compute_us != 0) j["compute_us"] = op.compute_us;
  if (with_iteration) j["iteration"] = op.iteration;
  if (op.start_us) j["start_us"] = *op.start_us;
  if (op.duration_us) j["duration_us"] = *op.duration_us;
  if (op.comm_size > 0) j["comm_size"] = op.comm_size;
  if (!op.group.empty()) j["group"] = op.group;
  if (!op.pg.empty()) j["pg"] = op.pg;
  return j;
}

template <typename Json>
Json header_to(const Trace& t) {
  Json j;
  j["schema"] = kTraceSchema;
  j["name"] = t.name;
  j["source"] = t.source;
  if (t.world_size > 0) j["world_size"] = t.world_size;
  return j;
}

// Written only when present, so single-step traces stay short; 0 is the default.
bool has_iterations(const Trace& t) {
  for (const TraceOp& op : t.ops)
    if (op.iteration != 0) return true;
  return false;
}

std::string dump(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

int Trace::iterations() const {
  int steps = 0;
  for (size_t i = 0; i < ops.size(); ++i)
    if (i == 0 || ops[i].iteration != ops[i - 1].iteration) ++steps;
  return steps;
}

Trace parse_trace_json(const json& doc, const std::string& origin) {
  if (!doc.is_object()) fail(origin, "a collbench trace must be a JSON object");
  reject_unknown_fields(doc, kTopFields, origin);
  if (!doc.contains("schema"))
    field_error(origin, "schema", std::string("missing (expected \"") + kTraceSchema + "\")");
  const std::string schema = string_field(doc, "schema", origin);
  if (schema != kTraceSchema)
    field_error(origin, "schema",
                "unsupported \"" + schema + "\" (this build reads \"" + kTraceSchema + "\")");

  Trace t;
  t.name = doc.contains("name") ? string_field(doc, "name", origin) : file_stem(origin);
  t.source = doc.contains("source") ? string_field(doc, "source", origin) : "json:" + origin;
  if (doc.contains("world_size")) {
    t.world_size = small_nonnegative_integer(doc, "world_size", origin);
    if (t.world_size == 0) field_error(origin, "world_size", "must be a positive integer (got 0)");
  }
  if (!doc.contains("ops")) field_error(origin, "ops", "missing (the list of operations)");
  const json& ops = doc.at("ops");
  if (!ops.is_array()) field_error(origin, "ops", "must be an array (got " + shown(ops) + ")");
  if (ops.empty()) field_error(origin, "ops", "is empty: a trace needs at least one operation");
  if (ops.size() > kMaxTraceOps)
    field_error(origin, "ops", "more than " + std::to_string(kMaxTraceOps) + " operations");
  t.ops.reserve(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const std::string where = origin + ": ops[" + std::to_string(i) + "]";
    t.ops.push_back(parse_op_record(ops[i], where, t.world_size));
    if (i > 0 && t.ops[i].iteration < t.ops[i - 1].iteration)
      field_error(where, "iteration",
                  "must not decrease along the trace (previous op has " +
                      std::to_string(t.ops[i - 1].iteration) + ")");
  }
  return t;
}

json to_json(const Trace& trace) {
  json j = header_to<json>(trace);
  const bool with_iteration = has_iterations(trace);
  j["ops"] = json::array();
  for (const TraceOp& op : trace.ops) j["ops"].push_back(op_to<json>(op, with_iteration));
  return j;
}

void save_trace(const Trace& trace, const std::string& path) {
  // The format needs at least one op (parse_trace_json refuses an empty list): a file
  // without any could not be read back, so none is written (the recorder on a rank that
  // issued no collective says so).
  if (trace.ops.empty())
    fail(path, "nothing to write: no operation (a trace needs at least one), so no file");
  // Hand-laid-out so that each op is one line: diffable and greppable.
  const nlohmann::ordered_json header = header_to<nlohmann::ordered_json>(trace);
  std::ostringstream out;
  out << "{\n";
  for (const auto& item : header.items())
    out << "  " << dump(item.key()) << ": " << dump(item.value()) << ",\n";
  out << "  \"ops\": [";
  const bool with_iteration = has_iterations(trace);
  for (size_t i = 0; i < trace.ops.size(); ++i)
    out << (i ? ",\n    " : "\n    ")
        << dump(op_to<nlohmann::ordered_json>(trace.ops[i], with_iteration));
  out << "\n  ]\n}\n";

  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) fail(path, std::string("cannot open for writing: ") + std::strerror(errno));
  file << out.str();
  file.close();
  if (!file) fail(path, "write failed");
}

namespace {

// The file as its format says, before check_ranks.
Trace read_trace_file(const std::string& path, int world_hint) {
  std::ifstream file(path, std::ios::binary);
  if (!file) fail(path, std::string("cannot open: ") + std::strerror(errno));
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad()) fail(path, "read error");
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);  // UTF-8 byte-order mark

  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) fail(path, "empty file (expected a JSON trace or CSV)");
  // Pickle protocol 2+ opens with PROTO (0x80): a flight recorder's default dump. It is
  // never unpickled (unpickling runs code the file names).
  if (static_cast<unsigned char>(text[0]) == 0x80)
    fail(path,
         "looks like a Python pickle (the flight recorder's default dump): not read, since "
         "unpickling an untrusted file runs code; dump JSON instead: "
         "torch._C._distributed_c10d._dump_fr_trace_json() (_dump_nccl_trace_json() for NCCL)");
  // Text formats have no control characters but blanks; protobuf's tags and lengths do.
  const size_t head = std::min<size_t>(text.size(), 4096);
  const bool binary =
      text.find('\0') != std::string::npos ||
      std::any_of(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(head), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u < 0x20 && u != '\t' && u != '\n' && u != '\r' && u != '\f' && u != '\v';
      });
  if (binary) {
    if (!chakra_supported())
      fail(path,
           "looks like a binary file (expected a JSON trace or CSV; Chakra ET protobuf files "
           "are not read by this build)");
    return import_chakra(text, path, world_hint);
  }
  if (text[first] != '{' && text[first] != '[') {
    std::istringstream in(text);
    return import_csv(in, path);
  }
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for 1e400
    std::string what = e.what();
    // Drop nlohmann's "[json.exception.parse_error.101] " prefix: noise for users.
    if (const size_t end = what.find("] ");
        what.rfind("[json.", 0) == 0 && end != std::string::npos)
      what.erase(0, end + 2);
    fail(path, "invalid JSON: " + what);
  }
  if (doc.is_array()) return import_param_basic(doc, path);
  const bool ours = doc.is_object() && doc.contains("schema") && doc.at("schema") == kTraceSchema;
  if (!ours && doc.is_object()) {  // PyTorch's formats, told apart by their top-level lists
    if (doc.contains("traceEvents")) return import_kineto(doc, path);
    if (doc.contains("nodes")) return import_execution_trace(doc, path);
    if (doc.contains("entries")) return import_flight_recorder(doc, path);
  }
  return parse_trace_json(doc, path);
}

}  // namespace

Trace load_trace(const std::string& path) {
  return detail::load_trace_file(path, 0);
}

void detail::check_ranks(const Trace& trace, const std::string& origin) {
  const int world = trace.world_size;
  for (size_t i = 0; i < trace.ops.size(); ++i) {
    const TraceOp& op = trace.ops[i];
    const std::string where =
        origin + ": operation " + std::to_string(i) + (op.name.empty() ? "" : " (" + op.name + ")");
    for (const int rank : op.group)
      if (world > 0 && rank >= world)
        fail(where, "its process group has rank " + std::to_string(rank) +
                        ", which is not below the trace's world_size " + std::to_string(world));
    if (!coll_is_rooted(op.coll)) continue;
    if (world > 0 && op.root >= world)
      fail(where, "root " + std::to_string(op.root) + " is not below the trace's world_size " +
                      std::to_string(world));
    if (!op.group.empty() && op.root >= static_cast<int>(op.group.size()))
      fail(where, "root " + std::to_string(op.root) + " is not below its process group's size " +
                      std::to_string(op.group.size()));
  }
}

Trace detail::load_trace_file(const std::string& path, int world_hint) {
  Trace trace = read_trace_file(path, world_hint);
  check_ranks(trace, path);
  return trace;
}

}  // namespace cb::dl
