#include "dl_patterns/replay_input.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <stdexcept>

#include "core/coll_spec.hpp"
#include "core/errors.hpp"
#include "dl_patterns/replay_step.hpp"

namespace cb::dl {
namespace {

std::string mib(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

std::string plural(size_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string known_models() {
  std::string list;
  for (const std::string& name : model_names()) list += (list.empty() ? "" : ", ") + name;
  for (const std::string& name : moe_model_names()) list += ", " + name + " (MoE)";
  return list;
}

// Where a message comes from, for error messages: the trace record or the gradient.
std::string origin(const ReplayInput& in, const Options& o, const ReplayMessage& m) {
  std::string where = o.model.empty() ? o.trace + ": ops[" + std::to_string(m.record) + "]"
                                      : "--model " + in.name + ": gradient \"" + m.name + "\"";
  if (m.members > 1) where += " (first of " + std::to_string(m.members) + " fused)";
  return where + " (" + std::string(to_string(m.coll)) + " of " + std::to_string(m.count) + " " +
         std::string(to_string(m.dtype)) + ")";
}

// The collectives the backend runs (and -c can check); those of per-peer or per-rank
// counts only with their count matrix (MoE models; a trace gives none). Barrier replays
// without buffers.
bool replayable(const ReplayMessage& m, BackendKind backend) {
  const CollSpec* spec = find_coll_spec(m.coll);
  return spec && spec->runs_on(backend) && spec->check && (!spec->varying_counts || m.counts);
}

// --steps N: the CSV count table split into its N training steps (split_steps()).
void split_table(ReplayInput& in, const Options& o) {
  const std::string option = "--steps " + std::to_string(o.steps);
  if (in.trace.source.rfind("csv:", 0) != 0)
    throw UsageError(option + ": applies to a CSV count table (size,count rows); " + o.trace +
                     " lists its calls in order (a collbench trace marks its steps with "
                     "\"iteration\")");
  try {
    in.trace = split_steps(in.trace, in.steps);
  } catch (const std::invalid_argument& e) {
    throw UsageError(option + ": " + o.trace + ": " + e.what());
  }
}

// "# Steps: ..." for a CSV table: how it is split, and what one step holds.
std::string steps_line(const ReplayInput& in) {
  if (in.steps == 1)
    return "# Steps: the table is replayed whole as one step (if it covers N training steps, "
           "--steps N replays one of them per step)";
  size_t min_msgs = SIZE_MAX, max_msgs = 0, min_bytes = SIZE_MAX, max_bytes = 0;
  std::vector<size_t> msgs(in.steps), bytes(in.steps);
  for (const ReplayMessage& m : in.plan.messages) {
    ++msgs.at(static_cast<size_t>(m.segment));
    bytes.at(static_cast<size_t>(m.segment)) += m.bytes();
  }
  for (size_t s = 0; s < in.steps; ++s) {
    min_msgs = std::min(min_msgs, msgs[s]);
    max_msgs = std::max(max_msgs, msgs[s]);
    min_bytes = std::min(min_bytes, bytes[s]);
    max_bytes = std::max(max_bytes, bytes[s]);
  }
  const std::string n = std::to_string(in.steps);
  const auto range = [](size_t lo, size_t hi) {
    return lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi);
  };
  std::string rule = kStepSplitRule;
  for (size_t at; (at = rule.find('N')) != std::string::npos;) rule.replace(at, 1, n);
  return "# Steps: the table covers " + n + " training steps (--steps " + n +
         "); each replay step replays one of them: " + rule + "; " + range(min_msgs, max_msgs) +
         " messages, " + range(min_bytes, max_bytes) + " B per step";
}

// "# Parallel: fsdp: ..." for the sharded modes: what a step issues, and the rules.
std::string parallel_line(const ReplayInput& in) {
  size_t gathers = 0, scatters = 0;
  for (const ReplayMessage& m : in.plan.messages) {
    gathers += m.coll == Coll::Allgather;
    scatters += m.coll == Coll::ReduceScatter;
  }
  std::string line = "# Parallel: " + describe(in.parallel) + ": " + plural(gathers, "allgather") +
                     " and " + plural(scatters, "reduce_scatter") + " per step; ";
  switch (in.parallel.mode) {
    case Parallel::Fsdp:
      return line +
             "FSDP full shard, one unit per layer group (+ root): allgather before its forward "
             "and again before its backward, the next unit's issued before this one's compute "
             "(prefetch), reduce_scatter after its backward; forward compute = " +
             std::to_string(kForwardShareOfBackward).substr(0, 3) +
             " x backward; units padded to a multiple of the ranks";
    case Parallel::Zero1:
    case Parallel::Zero2:
      return line + "ZeRO-" + (in.parallel.mode == Parallel::Zero1 ? "1" : "2") +
             ": gradients reduce_scattered in buckets of " +
             std::to_string(in.parallel.bucket_elements) + " elements " +
             (in.parallel.mode == Parallel::Zero1 ? "after backward"
                                                  : "during backward, as each fills") +
             ", then the updated partitions allgathered after the step; buckets padded to a "
             "multiple of the ranks";
    case Parallel::Ddp:
      break;
  }
  return line;
}

// A MoE --model: its layers' token exchanges (plan_moe()); --fusion and --parallel do not
// apply (no gradient allreduce is replayed: the experts are not replicated).
void load_moe(ReplayInput& in, const Options& o, const MoeModel& model, int nranks, int rank) {
  if (in.parallel.mode != Parallel::Ddp || in.fusion.policy != FusionPolicy::None)
    throw UsageError("--model " + model.name +
                     ": a MoE layer stack replays its expert-parallel token exchanges; --fusion "
                     "and --parallel apply to the dense models' gradients");
  in.moe = {&model, o.tokens > 0 ? static_cast<size_t>(o.tokens) : model.default_tokens, o.counts};
  try {
    in.plan = plan_moe(in.moe, o.dtype, in.compute, nranks, rank);
    in.input_line = "# Model: " + model.name + ": " + describe(in.moe, nranks);
  } catch (const std::invalid_argument& e) {
    throw UsageError("--model " + model.name + ": " + e.what());
  }
  in.name = model.name;
  in.source = "model:" + model.name;
}

}  // namespace

ReplayInput load_replay_input(const Options& o, int nranks, int rank) {
  ReplayInput in;
  in.steps = static_cast<size_t>(std::max(o.steps, 1));
  if (in.steps > 1 && !o.model.empty())
    throw UsageError("--steps applies to a CSV count table (--trace FILE.csv), not to --model");
  try {
    in.fusion = parse_fusion(o.fusion);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--fusion: ") + e.what());
  }
  try {
    in.compute = parse_compute(o.compute);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--compute: ") + e.what());
  }
  try {
    in.parallel = parse_parallel(o.parallel);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--parallel: ") + e.what());
  }
  if (in.parallel.mode != Parallel::Ddp) {
    if (o.model.empty())
      throw UsageError("--parallel " + o.parallel +
                       " applies to --model (a trace replays the collectives it lists)");
    if (in.fusion.policy != FusionPolicy::None)
      throw UsageError("--fusion " + o.fusion + " applies to --parallel ddp; " + o.parallel +
                       " groups gradients itself (units or buckets)");
  }
  if (!o.model.empty())
    if (const MoeModel* moe = find_moe_model(o.model)) {
      if (in.steps > 1) throw UsageError("--steps applies to a CSV count table");
      load_moe(in, o, *moe, nranks, rank);
      return in;
    }
  if (o.counts.kind != CountsPattern::Kind::Uniform || o.tokens > 0)
    throw UsageError("--counts and --tokens apply to the MoE models (" + [] {
      std::string l;
      for (const auto& n : moe_model_names()) l += (l.empty() ? "" : ", ") + n;
      return l;
    }() + ")");
  try {
    if (!o.model.empty()) {
      const Model* model = find_model(o.model);
      if (!model)
        throw UsageError("--model: unknown model '" + o.model + "' (known: " + known_models() +
                         ")");
      in.plan = plan_parallel(*model, o.dtype, in.fusion, in.parallel, in.compute, nranks);
      in.name = model->name;
      in.source = "model:" + model->name;
      in.input_line = "# Model: " + model->name + ", " + std::to_string(model->tensors.size()) +
                      " gradient tensors, " + std::to_string(model->total_params()) +
                      " parameters (" + mib(model->total_params() * dtype_size(o.dtype)) + " of " +
                      std::string(to_string(o.dtype)) + " gradients)";
    } else {
      if (o.dtype != Dtype::Float)
        throw UsageError("--dtype applies to --model; a trace names the dtype of every op");
      in.trace = load_trace(o.trace, rank);
      if (in.steps > 1) split_table(in, o);
      in.plan = plan_trace(in.trace, in.fusion, in.compute);
      in.plan.step_per_segment = in.steps > 1;
      in.name = in.trace.name;
      in.source = in.trace.source;
      in.input_line =
          "# Trace: " + o.trace + " (\"" + in.trace.name + "\", " + in.trace.source + ", " +
          plural(in.trace.ops.size(), "op") + " in " +
          plural(static_cast<size_t>(in.trace.iterations()), "step") +
          (in.trace.world_size ? ", recorded on " + std::to_string(in.trace.world_size) + " ranks"
                               : std::string()) +
          (in.steps > 1 ? "); one replay step replays one of its steps, in turn"
                        : "); one replay step replays all of them");
      if (in.source.rfind("csv:", 0) == 0) in.steps_line = steps_line(in);
    }
  } catch (const TraceError& e) {
    throw UsageError(e.what());
  } catch (const std::invalid_argument& e) {  // fuse() on a malformed gradient list
    throw UsageError(std::string(o.model.empty() ? o.trace : o.model) + ": " + e.what());
  }
  return in;
}

std::vector<std::string> describe_plan(const ReplayInput& in) {
  const ReplayPlan& p = in.plan;
  const std::string n = std::to_string(in.steps);
  std::vector<std::string> lines;
  if (in.parallel.mode != Parallel::Ddp) lines.push_back(parallel_line(in));
  const std::string grouping =
      in.moe.model ? "# Exchanges: per MoE layer, forward dispatch and combine, backward the "
                     "combine's gradient then the dispatch's (alltoallv, counts from the router)"
      : in.parallel.mode == Parallel::Ddp
          ? "# Fusion: " + describe(in.fusion)
          : "# Fusion: none; " + describe(in.parallel) +
                (in.parallel.mode == Parallel::Fsdp ? " groups by unit" : " groups by bucket");
  lines.push_back(grouping + ": " + plural(p.messages.size(), "message") + ", " +
                  std::to_string(p.total_bytes()) +
                  (in.steps > 1
                       ? " B in the table's " + n + " steps (" +
                             std::to_string(p.total_bytes() / in.steps) + " B per step on average)"
                       : " B per step"));
  if (in.compute.mode == ComputeSpec::Mode::None) {
    lines.push_back("# Compute: none: every message is ready at once (pure communication)");
    return lines;
  }
  char compute[160];
  std::snprintf(
      compute, sizeof compute, "# Compute: %s: %.1f us of emulated %s compute per step%s",
      describe(in.compute).c_str(), p.compute_us() / static_cast<double>(in.steps),
      in.parallel.mode == Parallel::Fsdp || in.moe.model ? "forward and backward" : "backward",
      in.steps > 1 ? " on average" : "");
  std::string line = compute;
  if (p.idle_us() > 0)
    line += ", " + std::to_string(static_cast<long>(p.idle_us() / static_cast<double>(in.steps))) +
            " us idle in fusion cycles";
  lines.push_back(line + "; test() of in-flight collectives after every " +
                  std::to_string(static_cast<int>(kProgressSliceUs)) + " us of it");
  return lines;
}

std::string ranks_text(const std::vector<int>& ranks) {
  std::string s = "[";
  for (size_t i = 0; i < ranks.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s + "]";
}

BackendFit fit_to_backend(ReplayInput& in, const Backend& be, const Options& o, int nranks) {
  BackendFit fit;
  if (!in.plan.groups.empty() && in.trace.world_size != nranks) {
    // The groups are ranks of the recorded job: on another number of ranks they mean nothing.
    fit.notes.push_back("# " + std::to_string(in.plan.groups.size()) +
                        " process groups smaller than the recorded job's " +
                        std::to_string(in.trace.world_size) + " ranks: replayed on all " +
                        std::to_string(nranks) +
                        " ranks (sub-communicators need the recorded number of ranks)");
    for (ReplayMessage& m : in.plan.messages) m.group = -1;
    in.plan.groups.clear();
    fit.groups_dropped = true;
  }
  if (!in.plan.groups.empty() && be.kind() != BackendKind::Mpi && be.kind() != BackendKind::Engine)
    throw UsageError(origin(in, o, in.plan.messages.front()) + ": collectives on " +
                     std::to_string(in.plan.groups.size()) +
                     " process groups smaller than the job replay on sub-communicators of the "
                     "mpi and engine backends, not on " +
                     be.name());
  for (ReplayMessage& m : in.plan.messages) {
    if (!replayable(m, be.kind())) {
      ++fit.skipped[std::string(to_string(m.coll))];
      continue;
    }
    if (const int ranks = in.plan.ranks_of(m, nranks); coll_is_rooted(m.coll) && m.root >= ranks) {
      m.root %= ranks;
      ++fit.wrapped_roots;
    }
    const CollArgs probe = message_args(m, o.mem, o.algo);
    const std::string why = be.unsupported(probe);
    if (why.empty()) continue;
    CollArgs as_float = probe;  // runs as float: the dtype is the problem
    as_float.dtype = Dtype::Float;
    const std::string field = !be.unsupported(as_float).empty() ? ""
                              : o.model.empty()                 ? "field \"dtype\": "
                                                                : "--dtype: ";
    throw UsageError(origin(in, o, m) + ": " + field + "the " + be.name() +
                     " backend cannot run it: " + why);
  }
  drop_messages(in.plan, [&](const ReplayMessage& m) { return !replayable(m, be.kind()); });
  if (in.plan.messages.empty())
    throw UsageError((o.model.empty() ? o.trace : o.model) +
                     ": nothing to replay: a trace's alltoallv ops have no count matrix (the "
                     "MoE models generate theirs)");
  for (const TraceOp& op : in.trace.ops)  // those on process groups replay on theirs
    fit.other_comm_sizes +=
        op.comm_size > 0 && op.comm_size != nranks && (in.plan.groups.empty() || op.group.empty());

  fit.not_replayed = in.trace.not_replayed;
  if (!fit.not_replayed.empty()) {
    std::string list;
    for (const auto& [why, count] : fit.not_replayed)
      list += (list.empty() ? "" : "; ") + std::to_string(count) + " x " + why;
    fit.notes.push_back("# Import: " + list);
  }
  if (!fit.skipped.empty()) {
    std::string list;
    for (const auto& [coll, count] : fit.skipped)
      list += (list.empty() ? "" : ", ") + coll + " x" + std::to_string(count);
    fit.notes.push_back("# Skipped (no backend implements them): " + list);
  }
  if (fit.wrapped_roots)
    fit.notes.push_back("# " + std::to_string(fit.wrapped_roots) +
                        (in.plan.groups.empty()
                             ? " roots >= " + std::to_string(nranks) + " ranks taken modulo " +
                                   std::to_string(nranks)
                             : std::string(" roots >= their group's ranks taken modulo its size")));
  if (!in.plan.groups.empty()) {
    std::string list;
    for (const std::vector<int>& g : in.plan.groups)
      list += (list.empty() ? "" : ", ") + ranks_text(g);
    fit.notes.push_back("# Process groups: " + list +
                        ": each op of one runs on a sub-communicator of its ranks (MPI_Comm_split "
                        "once per group); the others skip it");
  }
  if (fit.other_comm_sizes)
    fit.notes.push_back("# " + std::to_string(fit.other_comm_sizes) +
                        " ops were recorded on communicators of another size; every op is "
                        "replayed on all " +
                        std::to_string(nranks) + " ranks");
  return fit;
}

}  // namespace cb::dl
