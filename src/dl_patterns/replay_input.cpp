#include "dl_patterns/replay_input.hpp"

#include <cstdio>
#include <stdexcept>

#include "dl_patterns/replay_step.hpp"
#include "core/coll_spec.hpp"
#include "core/errors.hpp"

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

bool replayable(Coll c) {  // the collectives every backend implements (and -c can check)
  const CollSpec* spec = find_coll_spec(c);
  return spec && spec->backends == kAllBackends && spec->check;
}

}  // namespace

ReplayInput load_replay_input(const Options& o) {
  ReplayInput in;
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
    if (!o.model.empty()) {
      const Model* model = find_model(o.model);
      if (!model)
        throw UsageError("--model: unknown model '" + o.model + "' (known: " + known_models() +
                         ")");
      in.plan = plan_model(*model, o.dtype, in.fusion, in.compute);
      in.name = model->name;
      in.source = "model:" + model->name;
      in.input_line = "# Model: " + model->name + ", " + std::to_string(model->tensors.size()) +
                      " gradient tensors, " + std::to_string(model->total_params()) +
                      " parameters (" + mib(in.plan.total_bytes()) + " of " +
                      std::string(to_string(o.dtype)) + " gradients)";
    } else {
      if (o.dtype != Dtype::Float)
        throw UsageError("--dtype applies to --model; a trace names the dtype of every op");
      in.trace = load_trace(o.trace);
      in.plan = plan_trace(in.trace, in.fusion, in.compute);
      in.name = in.trace.name;
      in.source = in.trace.source;
      in.input_line =
          "# Trace: " + o.trace + " (\"" + in.trace.name + "\", " + in.trace.source + ", " +
          plural(in.trace.ops.size(), "op") + " in " +
          plural(static_cast<size_t>(in.trace.iterations()), "step") +
          (in.trace.world_size ? ", recorded on " + std::to_string(in.trace.world_size) + " ranks"
                               : std::string()) +
          "); one replay step replays all of them";
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
  std::vector<std::string> lines{"# Fusion: " + describe(in.fusion) + ": " +
                                 plural(p.messages.size(), "message") + ", " +
                                 std::to_string(p.total_bytes()) + " B per step"};
  if (in.compute.mode == ComputeSpec::Mode::None) {
    lines.push_back("# Compute: none: every message is ready at once (pure communication)");
    return lines;
  }
  char compute[160];
  std::snprintf(compute, sizeof compute,
                "# Compute: %s: %.1f us of emulated backward compute per step",
                describe(in.compute).c_str(), p.compute_us());
  std::string line = compute;
  if (p.idle_us() > 0)
    line += ", " + std::to_string(static_cast<long>(p.idle_us())) + " us idle in fusion cycles";
  lines.push_back(line + "; test() of in-flight collectives after every " +
                  std::to_string(static_cast<int>(kProgressSliceUs)) + " us of it");
  return lines;
}

BackendFit fit_to_backend(ReplayInput& in, const Backend& be, const Options& o, int nranks) {
  BackendFit fit;
  for (ReplayMessage& m : in.plan.messages) {
    if (!replayable(m.coll)) {
      ++fit.skipped[std::string(to_string(m.coll))];
      continue;
    }
    if ((m.coll == Coll::Bcast || m.coll == Coll::Reduce) && m.root >= nranks) {
      m.root %= nranks;
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
  drop_messages(in.plan, [](const ReplayMessage& m) { return !replayable(m.coll); });
  if (in.plan.messages.empty())
    throw UsageError((o.model.empty() ? o.trace : o.model) +
                     ": nothing to replay: collbench replays allreduce, bcast and alltoall");
  for (const TraceOp& op : in.trace.ops)
    fit.other_comm_sizes += op.comm_size > 0 && op.comm_size != nranks;

  if (!fit.skipped.empty()) {
    std::string list;
    for (const auto& [coll, count] : fit.skipped)
      list += (list.empty() ? "" : ", ") + coll + " x" + std::to_string(count);
    fit.notes.push_back("# Skipped (no backend implements them): " + list);
  }
  if (fit.wrapped_roots)
    fit.notes.push_back("# " + std::to_string(fit.wrapped_roots) + " roots >= " +
                        std::to_string(nranks) + " ranks taken modulo " + std::to_string(nranks));
  if (fit.other_comm_sizes)
    fit.notes.push_back("# " + std::to_string(fit.other_comm_sizes) +
                        " ops were recorded on communicators of another size; every op is "
                        "replayed on all " +
                        std::to_string(nranks) + " ranks");
  return fit;
}

}  // namespace cb::dl
