#include "engine/select.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "engine/group.hpp"
#include "engine/shm/node_shm.hpp"

namespace cb::engine {
namespace {

[[noreturn]] void bad(const std::string& origin, size_t index, const std::string& what) {
  throw UsageError("tuning table " + origin + ": rules[" + std::to_string(index) + "]: " + what);
}

Rule parse_rule(const nlohmann::json& j, const std::string& origin, size_t i) {
  if (!j.is_object()) bad(origin, i, "must be an object");
  for (const auto& [key, value] : j.items())
    if (key != "coll" && key != "mem" && key != "ranks" && key != "min_bytes" &&
        key != "max_bytes" && key != "algo" && key != "buffers" && key != "comment")
      bad(origin, i, "unknown field \"" + key + "\"");
  Rule r{};
  const auto text = [&](const char* key) {
    if (!j.contains(key) || !j[key].is_string())
      bad(origin, i, std::string("field \"") + key + "\" must be a string");
    return j[key].get<std::string>();
  };
  const auto coll = parse_coll(text("coll"));
  if (!coll || *coll == Coll::None) bad(origin, i, "unknown collective \"" + text("coll") + "\"");
  r.coll = *coll;
  const auto mem = parse_mem(text("mem"));
  if (!mem) bad(origin, i, "unknown memory kind \"" + text("mem") + "\" (host or cuda)");
  r.mem = *mem;
  r.min_ranks = 1;
  r.max_ranks = 1 << 30;
  if (j.contains("ranks")) {
    const auto& rk = j["ranks"];
    // Read as 64-bit and bounded before narrowing: [1, 4294967297] was read as [1, 1].
    if (!rk.is_array() || rk.size() != 2 || !rk[0].is_number_integer() ||
        !rk[1].is_number_integer() || rk[0].get<long long>() < 1 ||
        rk[1].get<long long>() < rk[0].get<long long>() || rk[1].get<long long>() > r.max_ranks)
      bad(origin, i,
          "field \"ranks\" must be [min, max] with 1 <= min <= max <= " +
              std::to_string(r.max_ranks));
    r.min_ranks = rk[0].get<int>();
    r.max_ranks = rk[1].get<int>();
  }
  const auto bytes_field = [&](const char* key, size_t fallback) {
    if (!j.contains(key) || j[key].is_null()) return fallback;
    const auto& v = j[key];
    if (!v.is_number_integer() || v.get<long long>() < 0)
      bad(origin, i, std::string("field \"") + key + "\" must be a byte count or null");
    return v.get<size_t>();
  };
  if (j.contains("buffers")) {
    const std::string b = text("buffers");
    if (b == "private")
      r.buffers = Buffers::Private;
    else if (b == "shared")
      r.buffers = Buffers::Shared;
    else if (b != "any")
      bad(origin, i, "field \"buffers\" must be \"private\", \"shared\" or \"any\"");
  }
  r.min_bytes = bytes_field("min_bytes", 0);
  r.max_bytes = bytes_field("max_bytes", SIZE_MAX);
  if (r.min_bytes > r.max_bytes) bad(origin, i, "\"min_bytes\" is larger than \"max_bytes\"");
  r.algo = find_algorithm(r.coll, text("algo"));
  if (!r.algo)
    bad(origin, i,
        "unknown " + std::string(to_string(r.coll)) + " algorithm \"" + text("algo") +
            "\" (known: " + algorithm_names(r.coll) + ")");
  return r;
}

// The "parameters" a table may set, by name.
struct ParameterField {
  const char* name;
  size_t TuningParameters::*field;
};
constexpr ParameterField kParameters[] = {
    {"hierarchical_allreduce_small_bytes", &TuningParameters::hierarchical_allreduce_small_bytes},
    {"hierarchical_bcast_small_bytes", &TuningParameters::hierarchical_bcast_small_bytes},
};

[[noreturn]] void bad_parameters(const std::string& origin, const std::string& what) {
  throw UsageError("tuning table " + origin + ": parameters: " + what);
}

TuningParameters parse_parameters(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object()) bad_parameters(origin, "must be an object of \"name\": value");
  TuningParameters p;
  for (const auto& [key, value] : j.items()) {
    const ParameterField* known = nullptr;
    for (const ParameterField& f : kParameters)
      if (key == f.name) known = &f;
    if (!known) {
      std::string names;
      for (const ParameterField& f : kParameters)
        names += (names.empty() ? "" : ", ") + std::string(f.name);
      bad_parameters(origin, "unknown parameter \"" + key + "\" (known: " + names + ")");
    }
    // Positive integers parse as unsigned; a signed one may still be a non-negative literal.
    if (!value.is_number_integer() || (!value.is_number_unsigned() && value.get<long long>() < 0))
      bad_parameters(origin,
                     "parameter \"" + key + "\" must be a byte count (a non-negative integer)");
    p.*(known->field) = value.get<size_t>();
  }
  return p;
}

const char* to_string(Buffers b) {
  return b == Buffers::Private ? "private" : b == Buffers::Shared ? "shared" : "any";
}

}  // namespace

TuningTable TuningTable::parse(const nlohmann::json& doc, const std::string& origin) {
  if (!doc.is_object() || !doc.contains("rules") || !doc["rules"].is_array())
    throw UsageError("tuning table " + origin + ": expected an object with a \"rules\" list");
  TuningTable t;
  t.origin_ = origin;
  for (size_t i = 0; i < doc["rules"].size(); ++i)
    t.rules_.push_back(parse_rule(doc["rules"][i], origin, i));
  if (doc.contains("parameters")) t.parameters_ = parse_parameters(doc["parameters"], origin);
  return t;
}

TuningTable TuningTable::load_default() {
  if (const char* path = std::getenv("CB_TUNING_FILE"); path && *path) {
    std::ifstream in(path);
    if (!in) throw UsageError(std::string("CB_TUNING_FILE: cannot open '") + path + "'");
    nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
    if (doc.is_discarded())
      throw UsageError(std::string("CB_TUNING_FILE '") + path + "' is not valid JSON");
    return parse(doc, path);
  }
  return parse(nlohmann::json::parse(builtin_tuning_json()), "built-in tuning/default.json");
}

std::vector<Rule> TuningTable::prune(Coll coll, Mem mem, int nranks) const {
  std::vector<Rule> out;
  for (const Rule& r : rules_)
    if (r.coll == coll && r.mem == mem && r.min_ranks <= nranks && nranks <= r.max_ranks)
      out.push_back(r);
  return out;
}

void TuningTable::to_json(nlohmann::json& out) const {
  out["origin"] = origin_;
  out["rules"] = nlohmann::json::array();
  for (const Rule& r : rules_)
    out["rules"].push_back({{"coll", to_string(r.coll)},
                            {"mem", to_string(r.mem)},
                            {"ranks", {r.min_ranks, r.max_ranks}},
                            {"min_bytes", r.min_bytes},
                            {"max_bytes", r.max_bytes == SIZE_MAX ? nlohmann::json(nullptr)
                                                                  : nlohmann::json(r.max_bytes)},
                            {"buffers", to_string(r.buffers)},
                            {"algo", r.algo->name}});
  out["parameters"] = nlohmann::json::object();  // all of them, as in force
  for (const ParameterField& f : kParameters) out["parameters"][f.name] = parameters_.*(f.field);
}

const Algorithm* select_algorithm(const std::vector<Rule>& pruned, const CollArgs& args,
                                  const Group& group) {
  const size_t bytes = args.count * dtype_size(args.dtype);
  const auto runs = [&](const Algorithm* a) {
    return !a->cannot_run || a->cannot_run(args, group).empty();
  };
  const Buffers kind =
      group.shm() && group.shm()->is_shared(args.recv.ptr) ? Buffers::Shared : Buffers::Private;
  for (const Rule& r : pruned)
    if ((r.buffers == Buffers::Any || r.buffers == kind) && r.min_bytes <= bytes &&
        bytes <= r.max_bytes && runs(r.algo))
      return r.algo;
  for (const Algorithm* a : all_algorithms())
    if (a->coll == args.coll && runs(a)) return a;
  return nullptr;
}

const Algorithm* choose_algorithm(const std::vector<Rule>& pruned, const std::string& forced,
                                  const CollArgs& args, const Group& group, std::string* why) {
  if (forced.empty()) {
    const Algorithm* algo = select_algorithm(pruned, args, group);
    if (!algo && why)
      *why = "no " + std::string(to_string(args.coll)) + " algorithm can run these arguments";
    return algo;
  }
  const Algorithm* algo = find_algorithm(args.coll, forced);
  if (!algo) {
    if (why)
      *why = "unknown " + std::string(to_string(args.coll)) + " algorithm '" + forced +
             "' (the engine has: " + algorithm_names(args.coll) + ")";
    return nullptr;
  }
  if (algo->cannot_run) {
    std::string reason = algo->cannot_run(args, group);
    if (!reason.empty()) {
      if (why) *why = std::move(reason);
      return nullptr;
    }
  }
  return algo;
}

}  // namespace cb::engine
