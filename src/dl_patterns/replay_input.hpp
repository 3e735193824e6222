// cb_replay's input: the options turned into a replay plan (model or trace, fusion,
// compute), with every problem reported as a UsageError that names the option, or the
// file, record and field; and the plan trimmed to what the backend can run.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "dl_patterns/fusion.hpp"
#include "dl_patterns/moe.hpp"
#include "dl_patterns/parallel.hpp"
#include "dl_patterns/replay_plan.hpp"
#include "harness/options.hpp"

namespace cb::dl {

struct ReplayInput {
  ReplayPlan plan;
  FusionConfig fusion;
  ParallelConfig parallel;  // --parallel (a trace: ddp)
  MoeConfig moe;            // a MoE --model (moe.model set): expert-parallel token exchanges
  ComputeSpec compute;
  std::string name;        // model or trace name
  std::string source;      // "model:resnet50", the trace's source
  std::string input_line;  // "# Model: ..." or "# Trace: ..."
  Trace trace;             // --trace only (with --steps, split into its training steps)
  size_t steps = 1;        // --steps: training steps of a count table (plan.step_per_segment)
  std::string steps_line;  // "# Steps: ..." for a CSV table, else empty
};

// How --steps splits a table, for the header and the JSON.
inline constexpr const char* kStepSplitRule =
    "count/N calls of each size per step, the remainder spread evenly from the first step: "
    "step s replays ceil((s+1)c/N) - ceil(sc/N) calls of a size called c times, so the N "
    "steps add up to the table exactly";

// Throws UsageError for an unknown model (listing the known ones), a bad --fusion or
// --compute spec, a missing or malformed trace, or --steps on anything but a CSV count table
// (or more steps than its largest count).
// `nranks` sizes the shards of --parallel zero1, zero2 and fsdp and places MoE experts;
// `rank` is whose compute a MoE plan holds (ranks with hot experts compute longer).
ReplayInput load_replay_input(const Options& o, int nranks = 1, int rank = 0);

// "# Parallel: ..." (sharded modes), "# Fusion: ..." and "# Compute: ..." header lines for
// the plan as it stands.
std::vector<std::string> describe_plan(const ReplayInput& in);

// What prepare() removed or changed, for the header and the JSON.
struct BackendFit {
  std::map<std::string, size_t> skipped;       // collective -> ops the backends cannot replay
  std::map<std::string, size_t> not_replayed;  // the trace's import: reason -> calls
  size_t wrapped_roots = 0;                    // roots >= nranks taken modulo nranks
  size_t other_comm_sizes = 0;                 // recorded on communicators of another size
  bool groups_dropped = false;     // the trace's process groups, replayed on all ranks instead
  std::vector<std::string> notes;  // "# ..." lines
};

// "[0, 1]": a process group's ranks.
std::string ranks_text(const std::vector<int>& ranks);

// Drops collectives no backend implements (reduce, allgather, reduce_scatter), wraps
// roots into range, and throws UsageError naming the record when `be` cannot run a
// message (e.g. a half allreduce on MPI).
BackendFit fit_to_backend(ReplayInput& in, const Backend& be, const Options& o, int nranks);

}  // namespace cb::dl
