// The engine's tuning table, as CB_TUNING_FILE names it: TuningTable::load_default() reads
// the file, then every rule is pruned and selected as the engine backend does. Expected:
// UsageError. Findings: any other exception; a rule whose numbers differ from the file's
// (a silently misread value) or whose ranges are empty; a table whose JSON does not read
// back to the same rules.
#include <stdlib.h>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "engine/group.hpp"
#include "engine/select.hpp"
#include "fuzz_util.hpp"

namespace {

using namespace cb;
using namespace cb::engine;
using nlohmann::json;

bool same_rules(const TuningTable& a, const TuningTable& b) {
  if (a.rules().size() != b.rules().size()) return false;
  for (size_t i = 0; i < a.rules().size(); ++i) {
    const Rule &x = a.rules()[i], &y = b.rules()[i];
    if (x.coll != y.coll || x.mem != y.mem || x.min_ranks != y.min_ranks ||
        x.max_ranks != y.max_ranks || x.min_bytes != y.min_bytes || x.max_bytes != y.max_bytes ||
        x.algo != y.algo)
      return false;
  }
  return a.parameters() == b.parameters();
}

// Each number the file gives must be the number the rule holds.
void check_fields(const json& in, const json& out, size_t i) {
  const auto differs = [&](const char* field) {
    fuzz::finding("rules[" + std::to_string(i) + "]: \"" + field + "\" " + in[field].dump() +
                  " was read as " + out[field].dump());
  };
  if (in.contains("ranks") && in["ranks"] != out["ranks"]) differs("ranks");
  for (const char* field : {"min_bytes", "max_bytes"})
    if (in.contains(field) && !in[field].is_null() && in[field] != out[field]) differs(field);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const fuzz::ScratchFile file("tuning.json");
  static const bool env = ::setenv("CB_TUNING_FILE", file.path().c_str(), 1) == 0;
  if (!env) fuzz::finding("cannot set CB_TUNING_FILE");
  file.write(data, size);
  TuningTable table;
  try {
    table = TuningTable::load_default();
  } catch (const UsageError&) {
    return 0;
  }
  for (const Rule& r : table.rules())
    if (r.min_ranks < 1 || r.min_ranks > r.max_ranks || r.min_bytes > r.max_bytes || !r.algo)
      fuzz::finding("a rule with an empty range or no algorithm was accepted");

  json out;
  table.to_json(out);
  const json in = json::parse(std::string(reinterpret_cast<const char*>(data), size));
  for (size_t i = 0; i < table.rules().size(); ++i)
    check_fields(in["rules"][i], out["rules"][i], i);
  try {
    if (!same_rules(table, TuningTable::parse(out, "written")))
      fuzz::finding("the table changed when written and read back");
  } catch (const UsageError& e) {
    fuzz::finding(std::string("the written table is rejected: ") + e.what());
  }

  const Group one(0, 1);
  for (Coll coll : {Coll::Allreduce, Coll::Bcast, Coll::Alltoall})
    for (Mem mem : {Mem::Host, Mem::Cuda}) {
      for (int n : {1, 2, 3, 8, 1 << 30}) (void)table.prune(coll, mem, n);
      const std::vector<Rule> rules = table.prune(coll, mem, 1);
      for (size_t count : {size_t{1}, size_t{1} << 10, size_t{1} << 24}) {
        CollArgs args{.coll = coll, .count = count, .dtype = Dtype::Float};
        args.recv.mem = args.send.mem = mem;
        (void)select_algorithm(rules, args, one);
      }
    }
  return 0;
}
