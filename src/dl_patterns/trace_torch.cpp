// Importers of PyTorch's own traces into the collbench trace (docs/trace-format.md §6-9):
// the profiler's Kineto/Chrome JSON, execution traces (ExecutionTraceObserver JSON) and
// flight recorder JSON dumps; and a folder of per-rank files of any format.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <string_view>

#include "core/coll_spec.hpp"
#include "dl_patterns/trace.hpp"
#include "dl_patterns/trace_fields.hpp"

namespace cb::dl {
namespace {

using namespace detail;
using nlohmann::json;

// ---- names and dtypes -----------------------------------------------------------------

// What a collective name means for the replay.
enum class Kind { Coll, PointToPoint, NoData, Unknown };
struct TorchColl {
  std::string_view key;  // lower case letters only: "c10d::_allgather_base_" -> "allgatherbase"
  Kind kind = Kind::Coll;
  Coll coll = Coll::None;
};

constexpr TorchColl kTorchColls[] = {
    {"allreduce", Kind::Coll, Coll::Allreduce},
    {"allreducecoalesced", Kind::Coll, Coll::Allreduce},
    {"broadcast", Kind::Coll, Coll::Bcast},
    {"reduce", Kind::Coll, Coll::Reduce},
    {"allgather", Kind::Coll, Coll::Allgather},
    {"allgatherbase", Kind::Coll, Coll::Allgather},
    {"allgatherintotensor", Kind::Coll, Coll::Allgather},
    {"allgatherintotensorcoalesced", Kind::Coll, Coll::Allgather},
    {"allgathercoalesced", Kind::Coll, Coll::Allgather},
    {"reducescatter", Kind::Coll, Coll::ReduceScatter},
    {"reducescatterbase", Kind::Coll, Coll::ReduceScatter},
    {"reducescattertensor", Kind::Coll, Coll::ReduceScatter},
    {"reducescattertensorcoalesced", Kind::Coll, Coll::ReduceScatter},
    {"alltoall", Kind::Coll, Coll::Alltoall},
    {"alltoallbase", Kind::Coll, Coll::Alltoall},
    {"alltoallv", Kind::Coll, Coll::Alltoall},
    {"barrier", Kind::Coll, Coll::Barrier},
    {"monitoredbarrier", Kind::Coll, Coll::Barrier},
    {"gather", Kind::Coll, Coll::Gather},
    {"scatter", Kind::Coll, Coll::Scatter},
    {"send", Kind::PointToPoint},
    {"recv", Kind::PointToPoint},
    {"recvanysource", Kind::PointToPoint},
    {"batchisendirecv", Kind::PointToPoint},
    {"wait", Kind::NoData},  // completion of an earlier call: no communication of its own
};

std::string name_key(std::string_view name) {
  for (std::string_view prefix : {"c10d::", "gloo:", "nccl:", "ucc:", "mpi:"})
    if (name.substr(0, prefix.size()) == prefix) {
      name.remove_prefix(prefix.size());
      break;
    }
  std::string key;
  for (unsigned char c : name)
    if (std::isalpha(c)) key += static_cast<char>(std::tolower(c));
  return key;
}

TorchColl find_torch_coll(std::string_view name) {
  const std::string key = name_key(name);
  for (const TorchColl& c : kTorchColls)
    if (c.key == key) return c;
  return {"", Kind::Unknown};
}

// torch's dtype spellings: "Float" (record_param_comms, flight recorder), "float",
// "c10::BFloat16", "long int" (profiler), "Tensor(float)" (execution trace).
std::optional<Dtype> torch_dtype(std::string_view raw) {
  std::string s;
  for (unsigned char c : raw) s += static_cast<char>(std::tolower(c));
  if (s.rfind("tensor(", 0) == 0 && s.back() == ')') s = s.substr(7, s.size() - 8);
  for (std::string_view prefix : {"torch.", "c10::", "at::"})
    if (s.rfind(prefix, 0) == 0) s.erase(0, prefix.size());
  struct Name {
    std::string_view name;
    Dtype dtype;
  };
  static constexpr Name kNames[] = {
      {"float", Dtype::Float},       {"float32", Dtype::Float},    {"double", Dtype::Double},
      {"float64", Dtype::Double},    {"half", Dtype::Half},        {"float16", Dtype::Half},
      {"bfloat16", Dtype::BFloat16}, {"long", Dtype::Int64},       {"long int", Dtype::Int64},
      {"int64", Dtype::Int64},       {"int", Dtype::Int32},        {"int32", Dtype::Int32},
      {"char", Dtype::Char},         {"signed char", Dtype::Char}, {"unsigned char", Dtype::Char},
      {"byte", Dtype::Char},         {"uint8", Dtype::Char},       {"int8", Dtype::Char},
      {"bool", Dtype::Char},
  };
  for (const Name& n : kNames)
    if (n.name == s) return n.dtype;
  return std::nullopt;
}

Dtype required_dtype(const json& v, std::string_view field, const std::string& where) {
  if (!v.is_string()) field_error(where, field, "must be a dtype name (got " + shown(v) + ")");
  const auto d = torch_dtype(v.get<std::string>());
  if (!d)
    field_error(where, field,
                "unknown dtype \"" + v.get<std::string>() +
                    "\" (float, double, half, bfloat16, long, int, byte, char, bool)");
  return *d;
}

// ---- sizes ----------------------------------------------------------------------------

// Elements of a shape ([2, 8320]) or of a list of shapes ([[68362], [10]]); nullopt when
// `shape` is no shape (a scalar argument's [] counts as one element only inside a list).
std::optional<uint64_t> numel(const json& shape, const std::string& where, std::string_view field,
                              int depth = 0) {
  if (!shape.is_array() || depth > 3) return std::nullopt;
  if (shape.empty()) return depth > 0 ? std::optional<uint64_t>(1) : std::nullopt;
  if (shape.front().is_array()) {  // a list of tensors: their elements added up
    uint64_t total = 0;
    for (const json& s : shape) {
      const auto n = numel(s, where, field, depth + 1);
      if (!n) return std::nullopt;
      total += *n;
      if (total > kMaxOpBytes) field_error(where, field, "too large (" + shown(shape) + ")");
    }
    return total;
  }
  uint64_t n = 1;
  for (const json& d : shape) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0) return std::nullopt;
    const uint64_t dim = d.get<uint64_t>();
    if (dim != 0 && n > kMaxOpBytes / dim)
      field_error(where, field, "too large (" + shown(shape) + ")");
    n *= dim;
  }
  return n;
}

// The c10d operator's arguments: which one holds the tensor whose elements are our count
// (`CollArgs`: allgather sent, reduce_scatter received, alltoall all sent, split later),
// and which holds the root. Indices into the schema's arguments, as the profiler's
// "Input Dims" and the execution trace's "inputs" list them.
struct C10dArgs {
  std::string_view key;
  int count_arg;
  int root_arg = -1;
};
constexpr C10dArgs kC10dArgs[] = {
    {"allreduce", 0},
    {"allreducecoalesced", 0},
    {"broadcast", 0, 2},  // broadcast_(Tensor[] tensors, pg, int root_rank, ...)
    {"reduce", 0, 3},     // reduce_(Tensor[] tensors, pg, op, int root_rank, ...)
    {"allgather", 1},     // allgather_(Tensor[][] output, Tensor[] input, ...)
    {"allgatherbase", 1},
    {"allgatherintotensorcoalesced", 1},
    {"allgathercoalesced", 1},
    {"reducescatter", 0},  // reduce_scatter_(Tensor[] output, Tensor[][] input, ...)
    {"reducescatterbase", 0},
    {"reducescattertensorcoalesced", 0},
    {"alltoall", 1},  // alltoall_(Tensor[] output, Tensor[] input, ...)
    {"alltoallbase", 1},
    {"gather", 1, 3},   // gather_(Tensor[][] output, Tensor[] input, pg, int root, ...)
    {"scatter", 0, 3},  // scatter_(Tensor[] output, Tensor[][] input, pg, int root, ...)
    {"barrier", -1},
};

const C10dArgs* find_c10d_args(std::string_view name) {
  const std::string key = name_key(name);
  for (const C10dArgs& a : kC10dArgs)
    if (a.key == key) return &a;
  return nullptr;
}

// "[1024, 1024, ..., 512]" (record_param_comms' lists, shortened past 30 entries) or a JSON
// list. Sets `truncated` when the list was shortened ("..." in it): its entries are then
// not the whole list.
std::vector<uint64_t> int_list(const json& v, std::string_view field, const std::string& where,
                               bool& truncated) {
  truncated = false;
  std::vector<uint64_t> out;
  const auto bad = [&] {
    field_error(where, field, "must be a list of sizes (got " + shown(v) + ")");
  };
  if (v.is_array()) {
    for (const json& x : v) {
      if (!x.is_number_integer() || x.get<int64_t>() < 0) bad();
      out.push_back(x.get<uint64_t>());
    }
    return out;
  }
  if (!v.is_string()) bad();
  std::string_view s = v.get_ref<const std::string&>();
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.size() < 2 || s.front() != '[' || s.back() != ']') bad();
  s = s.substr(1, s.size() - 2);
  while (!s.empty()) {
    const size_t comma = s.find(',');
    std::string_view item = s.substr(0, comma);
    s = comma == std::string_view::npos ? std::string_view() : s.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item == "...") {
      truncated = true;
      continue;
    }
    if (item.empty() || item.size() > 19) bad();
    uint64_t n = 0;
    for (char c : item) {
      if (c < '0' || c > '9') bad();
      n = n * 10 + static_cast<uint64_t>(c - '0');
    }
    out.push_back(n);
  }
  return out;
}

// ---- building the trace -----------------------------------------------------------------

// One collective as a source describes it, before it becomes a TraceOp.
struct Call {
  std::string name;  // as recorded: "c10d::allreduce_", "allreduce", "gloo:all_gather"
  std::string where;
  uint64_t elements = 0;  // of the tensor named by CollArgs' count (alltoall: all it sends)
  std::optional<Dtype> dtype;
  int root = 0;
  int group_size = 0;      // 0: not recorded
  std::string group;       // "pg 0 (default_pg)"
  std::string pg;          // the group's name ("0", "mesh_shard"): TraceOp::pg
  std::vector<int> ranks;  // the group's ranks of the job, when recorded whole
  std::vector<uint64_t> in_splits;
  bool splits_truncated = false;
  double compute_us = 0;
  int iteration = 0;
  std::optional<double> start_us, duration_us;
};

class Builder {
 public:
  Builder(std::string origin, std::string source) {
    t_.name = file_stem(origin);
    t_.source = std::move(source);
  }
  Trace& trace() { return t_; }
  void note(const std::string& what) { ++t_.not_replayed[what]; }

  void add(const Call& c) {
    const TorchColl tc = find_torch_coll(c.name);
    if (tc.kind == Kind::NoData) return;
    if (tc.kind == Kind::PointToPoint) {
      note(name_key(c.name) + ": point-to-point, not replayed (cb_replay pairs no sends)");
      return;
    }
    if (tc.kind == Kind::Unknown) {
      note("\"" + c.name + "\": unknown collective, not replayed");
      return;
    }
    TraceOp op;
    op.coll = tc.coll;
    op.name = c.group.empty() ? c.name : c.name + " on " + c.group;
    op.compute_us = c.compute_us;
    op.iteration = c.iteration;
    op.start_us = c.start_us;
    op.duration_us = c.duration_us;
    op.comm_size = c.group_size;
    op.pg = c.pg;
    op.group = c.ranks;
    std::sort(op.group.begin(), op.group.end());
    op.group.erase(std::unique(op.group.begin(), op.group.end()), op.group.end());
    if (coll_is_rooted(op.coll)) op.root = c.root;
    if (op.coll != Coll::Barrier) {
      if (c.elements == 0) {
        note(name_key(c.name) + ": no elements, not replayed");
        return;
      }
      if (!c.dtype) {
        op.dtype = Dtype::Float;
        note(name_key(c.name) + ": dtype not recorded, replayed as float");
      } else {
        op.dtype = *c.dtype;
      }
      op.count = c.elements;
      if (op.coll == Coll::Alltoall && !per_peer(c, op)) return;
      check_op_size(op.count, op.dtype, "size", c.where);
    }
    if (t_.ops.size() == kMaxTraceOps)
      fail(c.where, "more than " + std::to_string(kMaxTraceOps) + " operations");
    if (!t_.ops.empty() && op.iteration < t_.ops.back().iteration)
      op.iteration = t_.ops.back().iteration;
    t_.ops.push_back(std::move(op));
  }

  Trace finish(const std::string& origin, const std::string& what) {
    if (t_.ops.empty()) {
      std::string skipped;
      for (const auto& [why, n] : t_.not_replayed)
        skipped += (skipped.empty() ? " (" : "; ") + std::to_string(n) + " x " + why;
      fail(origin,
           "no collective to replay in this " + what + (skipped.empty() ? "" : skipped + ")"));
    }
    return std::move(t_);
  }

 private:
  // alltoall: the element count each rank sends to each peer. Uneven splits replay as
  // their mean (the replay's alltoall has one count), and say so.
  bool per_peer(const Call& c, TraceOp& op) {
    const uint64_t peers = c.in_splits.empty() || c.splits_truncated
                               ? static_cast<uint64_t>(c.group_size)
                               : c.in_splits.size();
    if (peers == 0) {
      note(name_key(c.name) + ": group size not recorded, not replayed");
      return false;
    }
    const bool uneven =
        !c.in_splits.empty() && std::adjacent_find(c.in_splits.begin(), c.in_splits.end(),
                                                   std::not_equal_to<>()) != c.in_splits.end();
    if (uneven || c.splits_truncated)
      note(name_key(c.name) +
           ": uneven or shortened split sizes, replayed as alltoall of the mean per-peer count");
    op.count = c.elements / peers;
    if (op.count == 0) {
      note(name_key(c.name) + ": less than one element per peer, not replayed");
      return false;
    }
    return true;
  }

  Trace t_;
};

const json* member(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  const auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

double number(const json& v, std::string_view field, const std::string& where) {
  if (!v.is_number() || !std::isfinite(v.get<double>()))
    field_error(where, field, "must be a number (got " + shown(v) + ")");
  return v.get<double>();
}

int group_size_from_ranks(const json& ranks, std::string_view field, const std::string& where) {
  bool truncated = false;
  const auto list = int_list(ranks, field, where, truncated);
  return truncated ? 0 : static_cast<int>(list.size());
}

// A process group's ranks of the job ("[0, 1]" or [0, 1]); empty when shortened ("...").
std::vector<int> group_ranks(const json& ranks, std::string_view field, const std::string& where) {
  bool truncated = false;
  const auto list = int_list(ranks, field, where, truncated);
  std::vector<int> out;
  if (truncated) return out;
  for (uint64_t r : list) {
    if (r >= (uint64_t{1} << 24))
      field_error(where, field, "rank " + std::to_string(r) + " too large");
    out.push_back(static_cast<int>(r));
  }
  return out;
}

// ---- Kineto / Chrome trace ------------------------------------------------------------------

struct Event {
  const json* e;
  double ts, dur;
  std::string where;
};

// The dtypes of the backend's own events ("gloo:all_reduce" with "Input type": ["float"]),
// queued by shape: a c10d operator on a tensor list records no dtype ("TensorList").
using DtypeQueue = std::map<std::string, std::deque<Dtype>>;

std::optional<Dtype> take_dtype(DtypeQueue& q, const std::string& shape) {
  auto it = q.find(shape);
  if (it == q.end() || it->second.empty()) return std::nullopt;
  const Dtype d = it->second.front();
  it->second.pop_front();
  return d;
}

// The c10d operator's tensor and root, from "Input Dims", "Input type" and "Concrete Inputs"
// (the profiler) or inputs' "shapes", "types" and "values" (the execution trace).
void c10d_call(const json& dims, const json& types, const json* values, const C10dArgs& a, Call& c,
               DtypeQueue* backend_dtypes, std::string_view dims_field) {
  if (a.count_arg < 0) return;  // barrier
  if (!dims.is_array() || dims.size() <= static_cast<size_t>(a.count_arg))
    field_error(
        c.where, dims_field,
        "has no tensor argument " + std::to_string(a.count_arg) + " (got " + shown(dims) + ")");
  const json& shape = dims[static_cast<size_t>(a.count_arg)];
  const auto n = numel(shape, c.where, dims_field);
  if (!n)
    field_error(c.where, dims_field,
                "argument " + std::to_string(a.count_arg) + " is no tensor shape (got " +
                    shown(shape) + ")");
  c.elements = *n;
  if (types.is_array() && types.size() > static_cast<size_t>(a.count_arg) &&
      types[static_cast<size_t>(a.count_arg)].is_string()) {
    std::string type = types[static_cast<size_t>(a.count_arg)].get<std::string>();
    // "GenericList[Tensor(float)]" (execution trace): the list's element type
    if (const size_t open = type.find('['); open != std::string::npos && type.back() == ']')
      type = type.substr(open + 1, type.size() - open - 2);
    c.dtype = torch_dtype(type);
  }
  if (!c.dtype && backend_dtypes) {
    // flatten [[68362]] to [68362] for a one-tensor list, as the backend's event records it
    const json flat = shape.size() == 1 && shape[0].is_array() ? shape[0] : shape;
    c.dtype = take_dtype(*backend_dtypes, flat.dump());
  }
  if (a.root_arg >= 0 && values && values->is_array() &&
      values->size() > static_cast<size_t>(a.root_arg)) {
    const json& r = (*values)[static_cast<size_t>(a.root_arg)];
    if (r.is_number_integer() && r.get<int64_t>() >= 0 && r.get<int64_t>() < (1 << 30))
      c.root = r.get<int>();
    else if (r.is_string() && !r.get<std::string>().empty() && r.get<std::string>().size() < 10 &&
             std::all_of(r.get<std::string>().begin(), r.get<std::string>().end(),
                         [](unsigned char ch) { return std::isdigit(ch); }))
      c.root = std::stoi(r.get<std::string>());
  }
}

// record_param_comms: the communication metadata the profiler saves (NCCL; "Collective
// name", "In msg nelems", ...).
void param_comms_call(const json& args, Call& c) {
  const json* name = member(args, "Collective name");
  if (!name) field_error(c.where, "args.Collective name", "missing");
  c.name = string_field(args, "Collective name", c.where);
  const TorchColl tc = find_torch_coll(c.name);
  if (tc.kind != Kind::Coll || tc.coll == Coll::Barrier) return;
  const char* count_field = tc.coll == Coll::ReduceScatter || tc.coll == Coll::Scatter
                                ? "Out msg nelems"
                                : "In msg nelems";
  if (!member(args, count_field))
    field_error(c.where, std::string("args.") + count_field, "missing");
  const json& n = args.at(count_field);
  if (!n.is_number_integer() || n.get<int64_t>() < 0)
    field_error(c.where, std::string("args.") + count_field,
                "must be a non-negative integer (got " + shown(n) + ")");
  c.elements = n.get<uint64_t>();
  if (const json* d = member(args, "dtype")) c.dtype = required_dtype(*d, "args.dtype", c.where);
  if (const json* g = member(args, "Group size");
      g && g->is_number_integer() && g->get<int64_t>() > 0 && g->get<int64_t>() < (1 << 24))
    c.group_size = g->get<int>();
  else if (const json* r = member(args, "Process Group Ranks"))
    c.group_size = group_size_from_ranks(*r, "args.Process Group Ranks", c.where);
  if (const json* r = member(args, "Process Group Ranks")) {
    c.ranks = group_ranks(*r, "args.Process Group Ranks", c.where);
    if (c.group_size > 0 && !c.ranks.empty() && c.ranks.size() != static_cast<size_t>(c.group_size))
      field_error(c.where, "args.Process Group Ranks",
                  "has " + std::to_string(c.ranks.size()) + " ranks, \"Group size\" says " +
                      std::to_string(c.group_size));
  }
  if (const json* s = member(args, "In split size"))
    c.in_splits = int_list(*s, "args.In split size", c.where, c.splits_truncated);
  if (const json* pg = member(args, "Process Group Name"); pg && pg->is_string()) {
    c.pg = pg->get<std::string>();
    c.group = "pg " + pg->get<std::string>();
    if (const json* desc = member(args, "Process Group Description"); desc && desc->is_string())
      c.group += " (" + desc->get<std::string>() + ")";
  }
  if (const json* seq = member(args, "Seq"); seq && seq->is_number_integer())
    c.group += (c.group.empty() ? "seq " : " seq ") + std::to_string(seq->get<int64_t>());
  if (coll_is_rooted(tc.coll))
    if (const json* r = member(args, "Root");
        r && r->is_number_integer() && r->get<int64_t>() >= 0 && r->get<int64_t>() < (1 << 30))
      c.root = r->get<int>();
}

}  // namespace

Trace import_kineto(const json& doc, const std::string& origin) {
  if (!doc.is_object() || !doc.contains("traceEvents"))
    field_error(origin, "traceEvents", "missing (not a profiler trace)");
  const json& events = doc.at("traceEvents");
  if (!events.is_array())
    field_error(origin, "traceEvents", "must be an array (got " + shown(events) + ")");
  Builder b(origin, "kineto:" + origin);
  int world = 0;
  if (const json* info = member(doc, "distributedInfo"))
    if (const json* ws = member(*info, "world_size");
        ws && ws->is_number_integer() && ws->get<int64_t>() > 0 && ws->get<int64_t>() < (1 << 24))
      world = ws->get<int>();
  b.trace().world_size = world;
  // Process groups smaller than the job (distributedInfo.pg_config: HSDP, new_group): a c10d
  // operator names none, so without record_param_comms such a trace's ops replay on all.
  int smaller_groups = 0;
  if (const json* info = member(doc, "distributedInfo"))
    if (const json* pgs = member(*info, "pg_config"); pgs && pgs->is_array())
      for (const json& pg : *pgs)
        if (const json* size = member(pg, "pg_size");
            size && size->is_number_integer() && world > 0 && size->get<int64_t>() < world)
          ++smaller_groups;

  std::vector<Event> comms, c10d, steps;
  DtypeQueue backend_dtypes;
  for (size_t i = 0; i < events.size(); ++i) {
    const json& e = events[i];
    const json* name = member(e, "name");
    if (!name || !name->is_string()) continue;
    const std::string& n = name->get_ref<const std::string&>();
    const bool is_comms = n == "record_param_comms";
    const bool is_c10d = n.rfind("c10d::", 0) == 0;
    const bool is_step = n.rfind("ProfilerStep#", 0) == 0;
    const bool is_backend = n.rfind("gloo:", 0) == 0 || n.rfind("nccl:", 0) == 0;
    if (!is_comms && !is_c10d && !is_step && !is_backend) continue;
    const std::string where = origin + ": traceEvents[" + std::to_string(i) + "] (" + n + ")";
    if (!member(e, "ts")) field_error(where, "ts", "missing");
    Event ev{&e, number(e.at("ts"), "ts", where), 0, where};
    if (const json* d = member(e, "dur")) ev.dur = std::max(0.0, number(*d, "dur", where));
    if (is_comms) comms.push_back(ev);
    if (is_c10d) c10d.push_back(ev);
    if (is_step) steps.push_back(ev);
    if (is_backend) {  // the dtype of a TensorList operator
      const json* args = member(e, "args");
      const json* dims = args ? member(*args, "Input Dims") : nullptr;
      const json* types = args ? member(*args, "Input type") : nullptr;
      if (dims && types && dims->is_array() && types->is_array() && !dims->empty() &&
          !types->empty() && (*types)[0].is_string())
        if (const auto d = torch_dtype((*types)[0].get<std::string>()))
          backend_dtypes[(*dims)[0].dump()].push_back(*d);
    }
  }
  const auto by_time = [](const Event& a, const Event& b2) { return a.ts < b2.ts; };
  std::stable_sort(steps.begin(), steps.end(), by_time);
  // NCCL traces have both: record_param_comms (inside the c10d operator) says more.
  std::vector<Event>& calls = comms.empty() ? c10d : comms;
  std::stable_sort(calls.begin(), calls.end(), by_time);
  std::stable_sort(c10d.begin(), c10d.end(), by_time);

  int first_step = -1;
  double prev_end = -1;
  int prev_step = -1;
  for (const Event& ev : calls) {
    Call c;
    c.where = ev.where;
    const json* args = member(*ev.e, "args");
    if (!args) field_error(ev.where, "args", "missing");
    if (!comms.empty()) {
      param_comms_call(*args, c);
    } else {
      c.name = ev.e->at("name").get<std::string>();
      const C10dArgs* a = find_c10d_args(c.name);
      c.group_size = world;
      if (smaller_groups > 0)
        b.note(name_key(c.name) + ": process group not recorded (the job has " +
               std::to_string(smaller_groups) +
               " smaller than it; a c10d operator names none), replayed on all ranks");
      if (a && a->count_arg >= 0) {
        const json* dims = member(*args, "Input Dims");
        if (!dims)
          field_error(ev.where, "args.Input Dims",
                      "missing: the sizes of the collectives are recorded only with "
                      "torch.profiler.profile(record_shapes=True)");
        const json empty = json::array();
        const json* types = member(*args, "Input type");
        c10d_call(*dims, types ? *types : empty, member(*args, "Concrete Inputs"), *a, c,
                  &backend_dtypes, "args.Input Dims");
      }
    }
    // Training step: the ProfilerStep#N around it, numbered from the first.
    int step = prev_step < 0 ? 0 : prev_step;
    double step_start = -1;
    for (const Event& s : steps)
      if (s.ts <= ev.ts && ev.ts <= s.ts + s.dur) {
        const std::string& sn = s.e->at("name").get_ref<const std::string&>();
        int k = 0;
        for (char ch : sn.substr(13))
          if (ch >= '0' && ch <= '9' && k < (1 << 26)) k = k * 10 + (ch - '0');
        if (first_step < 0) first_step = k;
        step = std::max(0, k - first_step);
        step_start = s.ts;
        break;
      }
    // Compute before it: from the end of the previous collective (or the step's start).
    const bool new_step = step != prev_step;
    const double from = new_step && step_start >= 0 ? step_start : prev_end;
    c.compute_us = from >= 0 ? std::max(0.0, ev.ts - from) : 0;
    c.iteration = step;
    prev_end = std::max(prev_end, ev.ts + ev.dur);
    prev_step = step;
    b.add(c);
  }
  return b.finish(origin, "profiler trace (no record_param_comms or c10d:: events)");
}

Trace import_execution_trace(const json& doc, const std::string& origin) {
  if (!doc.is_object() || !doc.contains("nodes"))
    field_error(origin, "nodes", "missing (not an execution trace)");
  if (const json* schema = member(doc, "schema")) {
    if (!schema->is_string())
      field_error(origin, "schema", "must be a string (got " + shown(*schema) + ")");
    // "1.1.1-chakra.0.0.4": the JSON execution trace; other majors may lay nodes out otherwise.
    if (schema->get<std::string>().rfind("1.", 0) != 0)
      field_error(origin, "schema",
                  "unsupported execution trace version \"" + schema->get<std::string>() +
                      "\" (this build reads 1.x)");
  }
  const json& nodes = doc.at("nodes");
  if (!nodes.is_array())
    field_error(origin, "nodes", "must be an array (got " + shown(nodes) + ")");
  struct Node {
    int64_t id;
    size_t index;
  };
  std::vector<Node> comm;
  bool param_comms_only = false;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const json* name = member(nodes[i], "name");
    if (!name || !name->is_string()) continue;
    const std::string& n = name->get_ref<const std::string&>();
    if (n == "record_param_comms") param_comms_only = true;
    if (n.rfind("c10d::", 0) != 0) continue;
    const json* id = member(nodes[i], "id");
    const std::string where = origin + ": nodes[" + std::to_string(i) + "] (" + n + ")";
    if (!id || !id->is_number_integer()) field_error(where, "id", "must be an integer");
    comm.push_back({id->get<int64_t>(), i});
  }
  if (comm.empty() && param_comms_only)
    fail(origin,
         "execution trace with record_param_comms nodes but no c10d:: operator nodes: "
         "not supported (record it with the operators, as ExecutionTraceObserver does)");
  // Node ids follow the order the operators began.
  std::stable_sort(comm.begin(), comm.end(),
                   [](const Node& a, const Node& b2) { return a.id < b2.id; });
  Builder b(origin, "et:" + origin);
  for (const Node& node : comm) {
    const json& n = nodes[node.index];
    Call c;
    c.name = n.at("name").get<std::string>();
    c.where = origin + ": nodes[" + std::to_string(node.index) + "] (" + c.name + ")";
    const C10dArgs* a = find_c10d_args(c.name);
    if (a && a->count_arg >= 0) {
      const json* inputs = member(n, "inputs");
      if (!inputs || !inputs->is_object()) field_error(c.where, "inputs", "missing");
      const json* shapes = member(*inputs, "shapes");
      if (!shapes) field_error(c.where, "inputs.shapes", "missing");
      const json empty = json::array();
      const json* types = member(*inputs, "types");
      c10d_call(*shapes, types ? *types : empty, member(*inputs, "values"), *a, c, nullptr,
                "inputs.shapes");
    }
    b.add(c);
  }
  return b.finish(origin, "execution trace (no c10d:: operator nodes)");
}

Trace import_flight_recorder(const json& doc, const std::string& origin) {
  if (!doc.is_object() || !doc.contains("entries"))
    field_error(origin, "entries", "missing (not a flight recorder dump)");
  if (const json* v = member(doc, "version")) {
    if (!v->is_string()) field_error(origin, "version", "must be a string (got " + shown(*v) + ")");
    if (v->get<std::string>().rfind("2.", 0) != 0)
      field_error(origin, "version",
                  "unsupported flight recorder version \"" + v->get<std::string>() +
                      "\" (this build reads 2.x)");
  }
  const json& entries = doc.at("entries");
  if (!entries.is_array())
    field_error(origin, "entries", "must be an array (got " + shown(entries) + ")");
  // Group sizes: pg_config maps a group's name to its ranks ("[0, 1]").
  std::map<std::string, int> group_sizes;
  std::map<std::string, std::vector<int>> group_members;  // by the key and "name" alike
  if (const json* pgs = member(doc, "pg_config"); pgs && pgs->is_object())
    for (const auto& [key, pg] : pgs->items()) {
      const json* ranks = member(pg, "ranks");
      if (!ranks) continue;
      const int size =
          group_size_from_ranks(*ranks, "pg_config.ranks", origin + ": pg_config[" + key + "]");
      group_sizes[key] = size;
      const std::vector<int> members =
          group_ranks(*ranks, "pg_config.ranks", origin + ": pg_config[" + key + "]");
      group_members[key] = members;
      if (const json* name = member(pg, "name"); name && name->is_string()) {
        group_sizes[name->get<std::string>()] = size;
        group_members[name->get<std::string>()] = members;
      }
    }
  Builder b(origin, "flight_recorder:" + origin);
  double prev_created = -1;
  for (size_t i = 0; i < entries.size(); ++i) {
    const json& e = entries[i];
    const std::string where = origin + ": entries[" + std::to_string(i) + "]";
    if (!e.is_object()) fail(where, "must be an object (got " + shown(e) + ")");
    if (!member(e, "profiling_name")) field_error(where, "profiling_name", "missing");
    Call c;
    c.name = string_field(e, "profiling_name", where);
    c.where = where + " (" + c.name + ")";
    if (const json* p2p = member(e, "is_p2p"); p2p && p2p->is_boolean() && p2p->get<bool>()) {
      b.note(name_key(c.name) + ": point-to-point, not replayed (cb_replay pairs no sends)");
      continue;
    }
    const TorchColl tc = find_torch_coll(c.name);
    if (tc.kind == Kind::Coll && tc.coll != Coll::Barrier) {
      const bool out = tc.coll == Coll::ReduceScatter || tc.coll == Coll::Scatter;
      const char* sizes_field = out ? "output_sizes" : "input_sizes";
      const char* dtypes_field = out ? "output_dtypes" : "input_dtypes";
      const json* sizes = member(e, sizes_field);
      if (!sizes) field_error(c.where, sizes_field, "missing");
      const auto n = numel(*sizes, c.where, sizes_field);
      if (!n)
        field_error(c.where, sizes_field,
                    "must be a list of tensor shapes (got " + shown(*sizes) + ")");
      c.elements = *n;
      if (const json* d = member(e, dtypes_field)) {
        if (!d->is_array())
          field_error(c.where, dtypes_field, "must be a list (got " + shown(*d) + ")");
        if (!d->empty()) c.dtype = required_dtype((*d)[0], dtypes_field, c.where);
      }
      if (coll_is_rooted(tc.coll))
        b.note(name_key(c.name) + ": root not recorded, replayed from rank 0");
    }
    if (const json* pg = member(e, "process_group");
        pg && pg->is_array() && !pg->empty() && (*pg)[0].is_string()) {
      const std::string pg_name = (*pg)[0].get<std::string>();
      c.pg = pg_name;
      // Only pg_config's entry of that name gives the ranks (torch 2.15's Gloo dump lists
      // one nameless group, whatever the groups: a folder of dumps tells them, §9).
      if (const auto m = group_members.find(pg_name); m != group_members.end() && !pg_name.empty())
        c.ranks = m->second;
      c.group = "pg " + pg_name;
      if (pg->size() > 1 && (*pg)[1].is_string())
        c.group += " (" + (*pg)[1].get<std::string>() + ")";
      const auto it = group_sizes.find(pg_name);
      c.group_size = it != group_sizes.end()   ? it->second
                     : group_sizes.size() == 1 ? group_sizes.begin()->second
                                               : 0;
    }
    if (const json* seq = member(e, "collective_seq_id"); seq && seq->is_number_integer())
      c.group += (c.group.empty() ? "seq " : " seq ") + std::to_string(seq->get<int64_t>());
    // Compute: the time between two enqueues, less the earlier one's duration when timed.
    if (const json* created = member(e, "time_created_ns"); created && created->is_number()) {
      const double t = number(*created, "time_created_ns", where) / 1e3;
      if (prev_created >= 0) c.compute_us = std::max(0.0, t - prev_created);
      prev_created = t;
      if (const json* ms = member(e, "duration_ms");
          ms && ms->is_number() && std::isfinite(ms->get<double>()) && ms->get<double>() > 0)
        prev_created += ms->get<double>() * 1e3;
    }
    b.add(c);
  }
  return b.finish(origin, "flight recorder dump");
}

namespace {

Trace name_folder(Trace t, const std::string& path, int rank, int n) {
  namespace fs = std::filesystem;
  t.source = t.source.substr(0, t.source.find(':') + 1) + path + " (rank " + std::to_string(rank) +
             " of " + std::to_string(n) + ")";
  fs::path folder = fs::path(path).lexically_normal();
  if (folder.filename().empty()) folder = folder.parent_path();  // "dir/"
  t.name = folder.filename().string();
  return t;
}

std::string describe_op(const TraceOp& o) {
  return o.name + ", " + std::to_string(o.count) + " x " + std::string(to_string(o.dtype));
}

// A folder whose ranks ran collectives on process groups smaller than the job (each op's
// `pg`, named alike on every rank as c10d names them): the group of a name is the ranks
// whose files use it (or the ranks the files give), and the ops of all files merged into
// one order that keeps every rank's own order (the k-th op on a group of each member is one
// collective). Ranks not in an op's group replay it as a skip (its compute_us 0). Returns
// an empty trace when every op is on a group of every rank (the plain check applies).
Trace merge_groups(const std::vector<Trace>& traces, const std::map<int, std::string>& files,
                   int me, const std::string& path) {
  const int n = static_cast<int>(traces.size());
  std::map<std::string, std::vector<int>> members;  // pg -> ranks using it (increasing)
  for (int r = 0; r < n; ++r)
    for (const TraceOp& op : traces[static_cast<size_t>(r)].ops) {
      auto& m = members[op.pg];
      if (m.empty() || m.back() != r) m.push_back(r);
    }
  bool partial = false;
  for (const auto& [pg, m] : members) partial = partial || static_cast<int>(m.size()) < n;
  for (const Trace& t : traces)
    for (const TraceOp& op : t.ops)
      partial = partial || (!op.group.empty() && static_cast<int>(op.group.size()) < n);
  if (!partial) return {};
  // Explicit ranks (record_param_comms' "Process Group Ranks", pg_config) must hold every
  // rank that used the group; they stand for the group.
  for (int r = 0; r < n; ++r)
    for (const TraceOp& op : traces[static_cast<size_t>(r)].ops) {
      if (op.group.empty()) continue;
      std::vector<int>& m = members[op.pg];
      for (int used : m)
        if (!std::binary_search(op.group.begin(), op.group.end(), used))
          fail(files.at(used), "uses process group \"" + op.pg + "\", whose ranks (" + files.at(r) +
                                   ") do not include rank " + std::to_string(used));
      if (op.group.back() >= n)
        fail(files.at(r), "process group \"" + op.pg + "\" has rank " +
                              std::to_string(op.group.back()) + ", the folder " +
                              std::to_string(n) + " ranks");
      m = op.group;
    }
  // Each rank's ops as (pg, k-th on that pg).
  using Key = std::pair<std::string, size_t>;
  std::vector<std::vector<Key>> seq(static_cast<size_t>(n));
  std::map<Key, std::vector<const TraceOp*>> by_key;  // per member, in members' order
  for (int r = 0; r < n; ++r) {
    std::map<std::string, size_t> k;
    for (const TraceOp& op : traces[static_cast<size_t>(r)].ops) {
      const Key key{op.pg, k[op.pg]++};
      seq[static_cast<size_t>(r)].push_back(key);
      by_key[key].push_back(&op);
    }
  }
  for (const auto& [key, ops] : by_key) {
    const std::vector<int>& m = members.at(key.first);
    if (ops.size() != m.size()) {  // a member issued fewer collectives on the group
      std::string counts;
      for (int r : m) {
        size_t c = 0;
        for (const TraceOp& op : traces[static_cast<size_t>(r)].ops) c += op.pg == key.first;
        counts += (counts.empty() ? "" : ", ") + std::string("rank ") + std::to_string(r) + ": " +
                  std::to_string(c);
      }
      fail(path, "process group \"" + key.first +
                     "\": its ranks issue different numbers of collectives on it (" + counts +
                     "): the ranks of a group issue the same collectives");
    }
    const TraceOp& a = *ops.front();
    for (size_t i = 1; i < ops.size(); ++i) {
      const TraceOp& o = *ops[i];
      const bool uneven_alltoall =
          a.coll == Coll::Alltoall && o.coll == Coll::Alltoall && a.dtype == o.dtype;
      if (a.coll != o.coll || a.dtype != o.dtype || a.root != o.root ||
          (a.count != o.count && !uneven_alltoall))
        fail(files.at(m[i]), "collective " + std::to_string(key.second) + " on process group \"" +
                                 key.first + "\" (" + describe_op(o) + ") differs from rank " +
                                 std::to_string(m[0]) + "'s (" + describe_op(a) + ")");
    }
  }
  // Merge: an op is next once it is next on every member; the lowest rank's goes first.
  Trace out;
  const Trace& mine = traces[static_cast<size_t>(me)];
  out.name = mine.name;
  out.source = mine.source;
  out.not_replayed = mine.not_replayed;
  std::vector<size_t> at(static_cast<size_t>(n), 0);
  std::vector<size_t> pos_of_me;  // my ops' positions, to copy compute_us
  int iteration = 0;
  for (;;) {
    bool done = true, moved = false;
    for (int r = 0; r < n && !moved; ++r) {
      const auto& s = seq[static_cast<size_t>(r)];
      if (at[static_cast<size_t>(r)] == s.size()) continue;
      done = false;
      const Key& key = s[at[static_cast<size_t>(r)]];
      const std::vector<int>& m = members.at(key.first);
      bool ready = true;
      for (int q : m)
        ready = ready && at[static_cast<size_t>(q)] < seq[static_cast<size_t>(q)].size() &&
                seq[static_cast<size_t>(q)][at[static_cast<size_t>(q)]] == key;
      if (!ready) continue;
      const std::vector<const TraceOp*>& ops = by_key.at(key);
      const auto me_at = std::find(m.begin(), m.end(), me);
      TraceOp op = me_at != m.end() ? *ops[static_cast<size_t>(me_at - m.begin())] : *ops[0];
      if (me_at == m.end()) op.compute_us = 0;  // skipped here
      op.count = 0;
      for (const TraceOp* o : ops) op.count = std::max(op.count, o->count);  // uneven alltoall
      for (const TraceOp* o : ops) iteration = std::max(iteration, o->iteration);
      op.iteration = iteration;  // the same on every rank: the steps end together
      op.group = static_cast<int>(m.size()) < n ? m : std::vector<int>{};
      op.comm_size = static_cast<int>(m.size());
      if (out.ops.size() == kMaxTraceOps)
        fail(path, "more than " + std::to_string(kMaxTraceOps) + " operations");
      out.ops.push_back(std::move(op));
      for (int q : m) ++at[static_cast<size_t>(q)];
      moved = true;
    }
    if (done) break;
    if (!moved) {
      std::string heads;
      for (int r = 0; r < n; ++r) {
        const auto& s = seq[static_cast<size_t>(r)];
        if (at[static_cast<size_t>(r)] < s.size())
          heads += (heads.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r) +
                   " waits on process group \"" + s[at[static_cast<size_t>(r)]].first +
                   "\" (collective " + std::to_string(s[at[static_cast<size_t>(r)]].second) + ")";
      }
      fail(path, "the ranks' orders of collectives on their process groups deadlock: " + heads);
    }
  }
  return out;
}

}  // namespace

Trace load_trace(const std::string& path, int rank) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return load_trace(path);
  // A folder of per-rank files: "...rank<R>..." in each name.
  std::map<int, std::string> files;
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    if (!entry.is_regular_file(ec)) continue;
    const std::string name = entry.path().filename().string();
    const size_t at = name.find("rank");
    if (at == std::string::npos) continue;
    size_t end = at + 4;
    int r = 0;
    while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end])) &&
           r < (1 << 20))
      r = r * 10 + (name[end++] - '0');
    if (end == at + 4) continue;
    if (files.count(r))
      fail(path, "two files for rank " + std::to_string(r) + ": " + files[r] + " and " + name +
                     " (one job's per-rank files per folder)");
    files[r] = entry.path().string();
  }
  if (ec) fail(path, "cannot read the folder: " + ec.message());
  if (files.empty()) fail(path, "no per-rank trace in the folder (files named ...rank<N>...)");
  const int n = static_cast<int>(files.size());
  if (files.rbegin()->first != n - 1)
    fail(path, "ranks 0 to " + std::to_string(n - 1) + " expected, found rank " +
                   std::to_string(files.rbegin()->first));
  std::vector<Trace> traces;
  for (const auto& [r, file] : files) traces.push_back(load_trace_file(file, n));
  if (Trace merged = merge_groups(traces, files, rank % n, path); !merged.ops.empty()) {
    merged.world_size = n;
    check_ranks(merged, path);
    return name_folder(std::move(merged), path, rank % n, n);
  }
  // Every rank must issue the same collectives, or the replay would hang or mismatch.
  Trace t = traces[static_cast<size_t>(rank % n)];
  for (int r = 0; r < n; ++r) {
    const Trace& other = traces[static_cast<size_t>(r)];
    if (other.ops.size() != t.ops.size())
      fail(files[r], "has " + std::to_string(other.ops.size()) + " collectives, " +
                         files[rank % n] + " " + std::to_string(t.ops.size()) +
                         ": the ranks of one job issue the same collectives");
    for (size_t i = 0; i < t.ops.size(); ++i) {
      TraceOp& a = t.ops[i];
      const TraceOp& o = other.ops[i];
      if (a.coll == Coll::Alltoall && o.coll == Coll::Alltoall && a.dtype == o.dtype &&
          a.count != o.count) {  // uneven all-to-all: the mean differs per rank
        a.count = std::max(a.count, o.count);
        continue;
      }
      if (a.coll != o.coll || a.count != o.count || a.dtype != o.dtype || a.root != o.root)
        fail(files[r], "collective " + std::to_string(i) + " (" + o.name + ", " +
                           std::to_string(o.count) + " x " + std::string(to_string(o.dtype)) +
                           ") differs from rank " + std::to_string(rank % n) + "'s (" + a.name +
                           ", " + std::to_string(a.count) + " x " +
                           std::string(to_string(a.dtype)) + ")");
    }
  }
  t.world_size = n;
  check_ranks(t, path);
  return name_folder(std::move(t), path, rank % n, n);
}

}  // namespace cb::dl
