// Table-driven algorithm selection. The tuning table is a flat list of rules
//   {"coll": "allreduce", "mem": "host", "ranks": [2, 8], "min_bytes": 0,
//    "max_bytes": 8192, "algo": "..."}
// ("ranks" optional: any; "min_bytes" optional: 0; "max_bytes": null = no limit; "buffers"
// optional: "private" limits a rule to buffers outside the engine's shared heap, a
// program's own memory or --alloc plain, "shared" to buffers in it). For one
// communicator the rules of each (collective, memory kind) that cover its rank count are
// kept in table order; a call takes the first of them whose size range holds its message
// size and whose algorithm can run here. So a table lists, for each size range, the
// preferred algorithm first (shared memory on one node), then fallbacks (hierarchical
// across nodes, the MPI-transport algorithms). The default table is compiled in
// (tuning/default.json); CB_TUNING_FILE names another. An optional "parameters" object
// sets numbers the algorithms read (TuningParameters: the hierarchical algorithms'
// small-message thresholds); a parameter left out keeps its default.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/algorithm.hpp"
#include "engine/tuning_parameters.hpp"

namespace cb::engine {

// Where a call's buffers lie, for rules measured on one kind (every rank passes the same
// kind: the benchmarks' --alloc; a program's buffers are all private).
enum class Buffers { Any, Private, Shared };

struct Rule {
  Coll coll;
  Mem mem;
  Buffers buffers = Buffers::Any;
  int min_ranks = 1, max_ranks = 1 << 30;
  size_t min_bytes = 0;
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
  const TuningParameters& parameters() const { return parameters_; }
  // The rules that apply to (coll, mem) at `nranks`, in table order.
  std::vector<Rule> prune(Coll coll, Mem mem, int nranks) const;
  void to_json(nlohmann::json& out) const;

 private:
  std::string origin_;
  std::vector<Rule> rules_;
  TuningParameters parameters_;
};

const char* builtin_tuning_json();  // tuning/default.json, embedded at build time

// The algorithm for `args`: the first pruned rule whose range holds the message size and
// whose algorithm can run; otherwise the first algorithm of the collective that can run.
const Algorithm* select_algorithm(const std::vector<Rule>& pruned, const CollArgs& args,
                                  const Group& group);

// The algorithm `forced` names (--algo, CB_<COLL>_ALGO), or with `forced` empty the table's
// choice (select_algorithm). nullptr when none can run `args`, with the reason in *why
// (an unknown name lists the collective's algorithms). --backend engine and the preload.
const Algorithm* choose_algorithm(const std::vector<Rule>& pruned, const std::string& forced,
                                  const CollArgs& args, const Group& group, std::string* why);

}  // namespace cb::engine
