// Importers into the collbench trace: CSV allreduce tables (size,count rows, as
// profilers print them) and PARAM "basic" comms traces; plus the PARAM writer.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <istream>
#include <optional>
#include <string_view>

#include "core/coll_spec.hpp"
#include "dl_patterns/trace.hpp"
#include "dl_patterns/trace_fields.hpp"

namespace cb::dl {
namespace {

using namespace detail;
using nlohmann::json;

// ---- CSV ----------------------------------------------------------------------------

std::string_view trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  const size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

std::vector<std::string_view> split_csv(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    std::string_view f = trim(line.substr(start, comma - start));
    if (f.size() >= 2 && f.front() == '"' && f.back() == '"') f = f.substr(1, f.size() - 2);
    fields.push_back(f);
    if (comma == std::string_view::npos) return fields;
    start = comma + 1;
  }
}

// A header's first field is a word ("size", "Message Size"), a data row's a number.
bool looks_numeric(std::string_view field) {
  return field.empty() || std::isdigit(static_cast<unsigned char>(field[0])) || field[0] == '-' ||
         field[0] == '+' || field[0] == '.';
}

// A count table expands into one op per call (some 600 B each through the plan): bound the
// calls, so that a few bytes of CSV ("10,4000000") cannot take gigabytes and minutes.
constexpr size_t kMaxTableCalls = size_t{1} << 20;

uint64_t csv_positive(std::string_view text, std::string_view field, const std::string& where) {
  if (text.empty()) field_error(where, field, "missing");
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  const std::string got = " (got \"" + std::string(text.substr(0, 40)) + "\")";
  if (ec == std::errc::result_out_of_range) field_error(where, field, "too large" + got);
  if (ec != std::errc() || end != text.data() + text.size() || value == 0)
    field_error(where, field, "must be a positive integer" + got);
  return value;
}

// ---- PARAM basic ------------------------------------------------------------------

// How a PARAM collective name maps onto a trace op; which size field holds our count.
struct ParamColl {
  std::string_view key;      // lower case, letters only, as PARAM's paramToCommName compares
  std::optional<Coll> coll;  // nullopt: a record that is no collective (wait, init): skipped
  enum class Count { In, Out, InPerPeer } count = Count::In;
};

constexpr ParamColl kParamColls[] = {
    {"allreduce", Coll::Allreduce},
    {"broadcast", Coll::Bcast},
    {"reduce", Coll::Reduce},
    {"allgather", Coll::Allgather},  // in_msg_size: what each rank contributes
    {"allgatherbase", Coll::Allgather},
    {"reducescatter", Coll::ReduceScatter, ParamColl::Count::Out},  // out: each rank's share
    {"reducescatterbase", Coll::ReduceScatter, ParamColl::Count::Out},
    {"alltoall", Coll::Alltoall, ParamColl::Count::InPerPeer},
    // all_to_allv carries uneven splits; collbench replays the mean per-peer count.
    {"alltoallv", Coll::Alltoall, ParamColl::Count::InPerPeer},
    {"alltoallbase", Coll::Alltoall, ParamColl::Count::InPerPeer},
    {"wait", std::nullopt},
    {"gather", Coll::Gather},                           // in_msg_size: what each rank contributes
    {"scatter", Coll::Scatter, ParamColl::Count::Out},  // out: each rank's share
    {"barrier", Coll::Barrier},                         // no size
    {"init", std::nullopt},
};

const ParamColl* find_param_coll(std::string_view name) {
  std::string key;
  for (unsigned char c : name)
    if (std::isalpha(c)) key += static_cast<char>(std::tolower(c));
  for (const ParamColl& p : kParamColls)
    if (p.key == key) return &p;
  return nullptr;
}

struct ParamDtype {
  std::string_view name;
  Dtype dtype;
};
// PARAM's dtypeMap names. One-byte types (signed or not, bool) all replay as char.
constexpr ParamDtype kParamDtypes[] = {
    {"float", Dtype::Float},      {"float32", Dtype::Float},      {"half", Dtype::Half},
    {"float16", Dtype::Half},     {"bfloat16", Dtype::BFloat16},  {"double", Dtype::Double},
    {"float64", Dtype::Double},   {"int", Dtype::Int32},          {"int32", Dtype::Int32},
    {"long", Dtype::Int64},       {"int64", Dtype::Int64},        {"char", Dtype::Char},
    {"signed char", Dtype::Char}, {"unsigned char", Dtype::Char}, {"byte", Dtype::Char},
    {"uint8", Dtype::Char},       {"int8", Dtype::Char},          {"bool", Dtype::Char},
};

Dtype param_dtype(const json& rec, const std::string& where) {
  if (!rec.contains("dtype")) field_error(where, "dtype", "missing");
  const std::string raw = string_field(rec, "dtype", where);
  std::string name;
  for (unsigned char c : raw) name += static_cast<char>(std::tolower(c));
  if (name.rfind("torch.", 0) == 0) name.erase(0, 6);
  for (const ParamDtype& d : kParamDtypes)
    if (d.name == name) return d.dtype;
  field_error(
      where, "dtype",
      "unknown dtype \"" + raw + "\" (float, half, bfloat16, double, int, long, byte, char ...)");
}

std::string marker_name(const json& rec) {
  if (!rec.contains("markers")) return {};
  const json& m = rec.at("markers");
  if (m.is_string()) return m.get<std::string>();
  std::string name;  // a marker stack: outermost first
  if (m.is_array())
    for (const json& item : m)
      if (item.is_string()) {
        if (!name.empty()) name += '/';
        name += item.get<std::string>();
      }
  return name;
}

std::string_view param_coll_name(Coll c) {
  switch (c) {
    case Coll::Allreduce:
      return "all_reduce";
    case Coll::Bcast:
      return "broadcast";
    case Coll::Reduce:
      return "reduce";
    case Coll::Allgather:
      return "all_gather";
    case Coll::ReduceScatter:
      return "reduce_scatter";
    case Coll::Alltoall:
      return "all_to_all";
    case Coll::Alltoallv:
      return "all_to_allv";
    case Coll::Barrier:
      return "barrier";
    case Coll::Gather:
      return "gather";
    case Coll::Scatter:
      return "scatter";
    case Coll::None:
      break;
    default:  // no PARAM name: collbench's own (gatherv, alltoallw, neighbor_alltoall ...)
      return to_string(c);
  }
  return "none";
}

std::string_view param_dtype_name(Dtype d) {
  switch (d) {
    case Dtype::Char:
      return "char";
    case Dtype::Int32:
      return "int";
    case Dtype::Int64:
      return "long";
    case Dtype::Float:
      return "float";
    case Dtype::Double:
      return "double";
    case Dtype::Half:
      return "half";
    case Dtype::BFloat16:
      return "bfloat16";
    default:  // the engine's own types (core/types.hpp): never benchmarked
      return to_string(d);
  }
  return "float";
}

}  // namespace

Trace import_csv(std::istream& in, const std::string& origin) {
  Trace t;
  t.name = file_stem(origin);
  t.source = "csv:" + origin;
  std::string line;
  size_t line_no = 0;
  bool first_row = true;
  while (std::getline(in, line)) {
    ++line_no;
    if (line_no == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // byte-order mark
    const std::string_view text = trim(line);
    if (text.empty() || text[0] == '#') continue;
    const auto fields = split_csv(text);
    const bool header = first_row && !looks_numeric(fields[0]);
    first_row = false;
    if (header) continue;

    const std::string where = origin + ":" + std::to_string(line_no);
    const uint64_t size = csv_positive(fields[0], "size", where);
    if (size > kMaxOpBytes)
      field_error(where, "size", "too large: exceeds the 1 TiB limit per operation");
    const uint64_t count = csv_positive(fields.size() > 1 ? fields[1] : "", "count", where);
    if (count > kMaxTableCalls - t.ops.size())
      field_error(where, "count",
                  "the table would call more than " + std::to_string(kMaxTableCalls) +
                      " operations in all (keep the rows of fewer training steps)");
    t.ops.insert(t.ops.end(), count, op_from_bytes(Coll::Allreduce, size));
  }
  if (in.bad()) fail(origin, "read error");
  if (t.ops.empty()) fail(origin, "no operations (expected CSV rows \"size,count\")");
  return t;
}

Trace import_param_basic(const json& records, const std::string& origin) {
  if (!records.is_array()) fail(origin, "a PARAM basic trace must be a JSON list of records");
  Trace t;
  t.name = file_stem(origin);
  t.source = "param:" + origin;
  for (size_t i = 0; i < records.size(); ++i) {
    const std::string where = origin + ": record[" + std::to_string(i) + "]";
    const json& rec = records[i];
    if (!rec.is_object()) fail(where, "must be an object (got " + shown(rec) + ")");
    if (!rec.contains("comms")) continue;  // compute records ("compute": "gemm" ...)
    const std::string comms = string_field(rec, "comms", where);
    const ParamColl* kind = find_param_coll(comms);
    if (!kind)
      field_error(where, "comms",
                  "unsupported collective \"" + comms +
                      "\" (all_reduce, broadcast, reduce, all_gather, "
                      "reduce_scatter, all_to_all[v], barrier; wait/init skipped)");
    if (!kind->coll) continue;

    TraceOp op;
    op.coll = *kind->coll;
    if (op.coll == Coll::Barrier) {  // no data: no size or dtype to read
      op.name = marker_name(rec);
      if (t.ops.size() == kMaxTraceOps)
        fail(where, "more than " + std::to_string(kMaxTraceOps) + " operations");
      t.ops.push_back(std::move(op));
      continue;
    }
    op.dtype = param_dtype(rec, where);
    if (rec.contains("world_size") && !rec.at("world_size").is_null()) {
      const int ws = small_nonnegative_integer(rec, "world_size", where);
      if (ws == 0) field_error(where, "world_size", "must be a positive integer (got 0)");
      if (t.world_size != 0 && ws != t.world_size)
        field_error(where, "world_size",
                    std::to_string(ws) + " differs from earlier records (" +
                        std::to_string(t.world_size) +
                        "): sub-group collectives are not supported");
      t.world_size = ws;
    }
    const std::string_view size_field =
        kind->count == ParamColl::Count::Out ? "out_msg_size" : "in_msg_size";
    if (!rec.contains(std::string(size_field))) field_error(where, size_field, "missing");
    op.count = positive_integer(rec, size_field, where);
    if (kind->count == ParamColl::Count::InPerPeer) {
      if (t.world_size == 0)
        field_error(where, "world_size", "missing: needed to split all_to_all per peer");
      op.count /= static_cast<uint64_t>(t.world_size);
      if (op.count == 0)
        field_error(where, size_field, "smaller than world_size: less than one element per peer");
    }
    check_op_size(op.count, op.dtype, size_field, where);
    if (coll_is_rooted(op.coll) && rec.contains("root") && !rec.at("root").is_null()) {
      op.root = small_nonnegative_integer(rec, "root", where);
      if (t.world_size > 0 && op.root >= t.world_size)
        field_error(where, "root", "must be below world_size " + std::to_string(t.world_size));
    }
    op.name = marker_name(rec);
    if (t.ops.size() == kMaxTraceOps)
      fail(where, "more than " + std::to_string(kMaxTraceOps) + " operations");
    t.ops.push_back(std::move(op));
  }
  if (t.ops.empty()) fail(origin, "no collective records (records need a \"comms\" field)");
  return t;
}

json to_param_basic(const Trace& trace) {
  json records = json::array();
  const uint64_t ws = static_cast<uint64_t>(trace.world_size);
  for (size_t i = 0; i < trace.ops.size(); ++i) {
    const TraceOp& op = trace.ops[i];
    uint64_t in = op.count, out = op.count;
    const bool needs_world = op.coll == Coll::Allgather || op.coll == Coll::ReduceScatter ||
                             op.coll == Coll::Alltoall || op.coll == Coll::Gather ||
                             op.coll == Coll::Scatter;
    if (needs_world && ws == 0)
      fail(trace.name + ": ops[" + std::to_string(i) + "]",
           "world_size is needed to write " + std::string(to_string(op.coll)) + " sizes for PARAM");
    if (op.coll == Coll::Allgather || op.coll == Coll::Gather) out = op.count * ws;
    if (op.coll == Coll::Scatter) in = op.count * ws;
    if (op.coll == Coll::ReduceScatter) in = op.count * ws;
    if (op.coll == Coll::Alltoall) in = out = op.count * ws;

    json rec;
    rec["comms"] = std::string(param_coll_name(op.coll));
    if (op.coll != Coll::Barrier) {
      rec["in_msg_size"] = in;
      rec["out_msg_size"] = out;
      rec["dtype"] = std::string(param_dtype_name(op.dtype));
    }
    if (ws > 0) rec["world_size"] = ws;
    if (op.coll == Coll::Bcast || op.coll == Coll::Reduce) rec["root"] = op.root;
    if (!op.name.empty()) rec["markers"] = json::array({op.name});
    records.push_back(std::move(rec));
  }
  return records;
}

}  // namespace cb::dl
