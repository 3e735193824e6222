// Table-driven algorithm selection. The tuning table is a flat list of rules
//   {"coll": "allreduce", "mem": "host", "ranks": [2, 8], "max_bytes": 8192, "algo": "..."}
// ("ranks" optional: any; "max_bytes": null = no limit). For one communicator the rules
// of each (collective, memory kind) that cover its rank count are kept, sorted by
// max_bytes; a call takes the first rule whose max_bytes >= its message size and whose
// algorithm can run, falling back along the list. The default table is compiled in
// (tuning/default.json); CB_TUNING_FILE names another.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "collective/engine/algorithm.hpp"

namespace cb::engine {

struct Rule {
  Coll coll;
  Mem mem;
  int min_ranks = 1, max_ranks = 1 << 30;
  size_t max_bytes = SIZE_MAX;
  const Algorithm* algo;
};

class TuningTable {
 public:
  // Throws UsageError naming the origin, rule and field of any mistake.
  static TuningTable parse(const nlohmann::json& doc, const std::string& origin);
  static TuningTable load_default();  // CB_TUNING_FILE or the compiled-in table

  const std::string& origin() const { return origin_; }
  const std::vector<Rule>& rules() const { return rules_; }
  // The rules that apply to (coll, mem) at `nranks`, sorted by max_bytes.
  std::vector<Rule> prune(Coll coll, Mem mem, int nranks) const;
  void to_json(nlohmann::json& out) const;

 private:
  std::string origin_;
  std::vector<Rule> rules_;
};

const char* builtin_tuning_json();  // tuning/default.json, embedded at build time

// The algorithm for `args`: the first pruned rule that fits and can run; otherwise the
// first algorithm of the collective that can run. `why` collects the rules passed over.
const Algorithm* select_algorithm(const std::vector<Rule>& pruned, const CollArgs& args,
                                  const Group& group);

}  // namespace cb::engine
