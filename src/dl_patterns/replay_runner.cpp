#include "dl_patterns/replay_runner.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>

#include "backends/make_backend.hpp"
#include "core/errors.hpp"
#include "core/mpi_check.hpp"
#include "dl_patterns/replay_input.hpp"
#include "dl_patterns/replay_step.hpp"
#include "harness/sizes.hpp"
#include "harness/stats.hpp"

namespace cb {
namespace {

using namespace cb::dl;

constexpr size_t kMaxJsonMessages = 10000;  // keeps the document small for huge traces

double mean_of(const std::vector<double>& v) {
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// Timed step j replays replay step j mod L: the mean of a per-step figure over `iters` steps.
double timed_mean(const std::vector<double>& per_step, int iters) {
  if (per_step.empty() || iters < 1) return 0;
  double sum = 0;
  for (int j = 0; j < iters; ++j) sum += per_step[static_cast<size_t>(j) % per_step.size()];
  return sum / iters;
}

std::string mib(size_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f MiB (%zu B)", static_cast<double>(bytes) / (1 << 20), bytes);
  return buf;
}

// A process group's sub-communicator on this rank: its control plane and backend.
struct GroupComm {
  MPI_Comm comm = MPI_COMM_NULL;
  std::unique_ptr<Control> ctl;
  std::unique_ptr<Backend> be;
  GroupComm() = default;
  GroupComm(const GroupComm&) = delete;
  GroupComm& operator=(const GroupComm&) = delete;
  ~GroupComm() {
    be.reset();  // before the communicators they duplicate
    ctl.reset();
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
};

class ReplayRunner final : public Runner {
 public:
  explicit ReplayRunner(const RunContext& rc) : rc_(rc) {}

  void prepare() override {
    const Options& o = rc_.opt;
    in_ = load_replay_input(o, rc_.ctl.size(), rc_.ctl.rank());
    if (!o.export_trace.empty() && in_.moe.model)
      throw UsageError("--export-trace: a trace op has no count matrix, so " + in_.name +
                       "'s alltoallv exchanges cannot be written as one");
    if (!o.export_trace.empty()) {  // write the plan and replay nothing
      if (rc_.ctl.is_root()) {
        Trace t = to_trace(in_.plan, in_.name,
                           in_.source + " --fusion " + o.fusion + " --compute " + o.compute);
        t.world_size = in_.trace.world_size;
        try {
          // FILE.et: Chakra ET (for ASTRA-sim, PARAM's et_replay); else collbench JSON.
          const std::string& path = o.export_trace;
          if (path.size() > 3 && path.compare(path.size() - 3, 3, ".et") == 0) {
            if (t.world_size == 0) t.world_size = rc_.ctl.size();
            save_chakra(t, path);
          } else {
            save_trace(t, path);
          }
        } catch (const TraceError& e) {
          throw UsageError(std::string("--export-trace: ") + e.what());
        }
      }
      return;
    }
    const int n = rc_.ctl.size();
    fit_ = fit_to_backend(in_, rc_.be, o, n);
    buffers_ = plan_buffers(in_.plan, n, o.mem_limit);
    if (buffers_.total_bytes() > o.mem_limit)
      throw UsageError(
          "the replay needs " + mib(buffers_.total_bytes()) +
          " of buffers per process, more than the limit of " + format_bytes(o.mem_limit) +
          " (-M/--mem-limit): " + std::to_string(buffers_.bytes.size()) + " buffers (" +
          buffers_.sizes_text() + ") shared among " + std::to_string(in_.plan.messages.size()) +
          " messages, the largest message " + std::to_string(buffers_.largest_bytes()) +
          " B; a buffer passes on within a step only " + std::to_string(kShareWindow) +
          " or more launches later, after waiting for its previous message");
    steps_ = replay_steps(in_.plan);
    // Process groups: one sub-communicator each, made once by MPI_Comm_split (every rank
    // calls it, in the plan's order of groups), with a backend of the same options on it.
    std::vector<Backend*> group_backends;
    for (const std::vector<int>& members : in_.plan.groups) {
      const int me = rc_.ctl.rank();
      const bool in = std::binary_search(members.begin(), members.end(), me);
      auto g = std::make_unique<GroupComm>();
      CB_MPI(MPI_Comm_split(rc_.ctl.comm(), in ? 0 : MPI_UNDEFINED, me, &g->comm));
      if (in) {
        g->ctl = std::make_unique<Control>(g->comm);
        g->ctl->set_wait_mode(rc_.ctl.wait_mode());
        g->be = make_backend(backend_config(o), *g->ctl);
      }
      group_backends.push_back(g->be.get());
      groups_.push_back(std::move(g));
    }
    step_ = std::make_unique<StepRunner>(rc_.be, rc_.ctl, in_.plan, buffers_, o.mem, o.algo,
                                         group_backends);
  }

  std::vector<std::string> header_lines() const override {
    std::vector<std::string> lines{in_.input_line};
    const std::vector<std::string> plan = describe_plan(in_);
    lines.insert(lines.end(), plan.begin(), plan.end());
    if (!in_.steps_line.empty()) lines.push_back(in_.steps_line);
    if (!step_) {
      lines.push_back("# Exported " + std::to_string(in_.plan.messages.size()) + " ops to " +
                      rc_.opt.export_trace + " (--export-trace); nothing replayed");
      return lines;
    }
    lines.insert(lines.end(), fit_.notes.begin(), fit_.notes.end());
    lines.push_back(
        "# Step: barrier; each message started non-blocking once ready (allreduce in place, "
        "no limit on messages in flight" +
        (buffers_.reuse_waits() ? std::string("; a message whose buffer an earlier one of the "
                                              "step used first waits for that one")
                                : std::string()) +
        "); " +
        (in_.moe.model           ? std::string("each exchange waits for the one before; ")
         : in_.plan.dependencies ? std::string("compute waits for the allgather of its unit; ")
                                 : std::string()) +
        "wait for all at the end. Exposed = Step - Compute; Overlap = 1 - Exposed / Pure Comm.");
    if (in_.steps > 1) {
      const size_t n = in_.steps;
      const size_t iters = static_cast<size_t>(rc_.opt.iterations_for(step_bytes()));
      const std::string timed =
          iters < n ? "steps 0-" + std::to_string(iters - 1) + "; -i " + std::to_string(n) +
                          " replays the whole table once"
          : iters % n == 0 ? "the whole table " + std::to_string(iters / n) + "x"
                           : "the whole table " + std::to_string(iters / n) + "x, then steps 0-" +
                                 std::to_string(iters % n - 1) + "; a multiple of " +
                                 std::to_string(n) + " times every step equally";
      lines.push_back("# Timed step j replays training step j mod " + std::to_string(n) +
                      " (warmup steps likewise, from step 0): -i " + std::to_string(iters) +
                      " times " + timed);
    }
    const size_t messages = in_.plan.messages.size(), buffers = buffers_.bytes.size();
    lines.push_back(std::string("# Buffers on ") + (rc_.opt.mem == Mem::Cuda ? "DEVICE" : "HOST") +
                    ": " +
                    (buffers == messages
                         ? "one per message (" + std::to_string(buffers) + ")"
                         : std::to_string(buffers) + " shared among " + std::to_string(messages) +
                               " messages (" + sharing_text() + ")") +
                    ", " + mib(buffers_.total_bytes()) + " per rank, limit " +
                    format_bytes(rc_.opt.mem_limit) + " (-M)");
    return lines;
  }

  std::vector<Point> points() const override {
    if (!step_) return {};
    return {{step_bytes(), rc_.opt.algo}};
  }

  SizeOutcome measure(const Point& point) override {
    const Options& o = rc_.opt;
    const Control& ctl = rc_.ctl;
    const int n = ctl.size();
    const int iters = o.iterations_for(point.bytes), warmup = o.warmup_for(point.bytes);
    const ReplayPlan& plan = in_.plan;

    step_->clear_records();  // each --repeat pass reports its own per-message figures
    const Steps with = run_steps(steps_, iters, warmup, true);
    const bool has_compute = plan.compute_us() + plan.idle_us() > 0;
    std::vector<std::vector<ReplayAction>> pure_steps;
    for (const auto& actions : steps_) pure_steps.push_back(without_compute(actions));
    const Steps pure = has_compute ? run_steps(pure_steps, iters, warmup, false)
                                   : with;  // without compute the step is pure communication

    // Per replay step (one, or each training step of a table), then averaged over the
    // timed steps that replayed it.
    std::vector<double> step_bus(steps_.size()), step_compute(steps_.size()),
        step_idle(steps_.size()), step_messages(steps_.size());
    for (const ReplayMessage& m : plan.messages) {
      const size_t s = plan.step_per_segment ? static_cast<size_t>(m.segment) : 0;
      step_bus.at(s) += bus_bytes({m}, plan.ranks_of(m, n));
      step_messages.at(s) += 1;
    }
    for (size_t s = 0; s < steps_.size(); ++s)
      for (const ReplayAction& a : steps_[s]) {
        if (a.kind == ReplayAction::Kind::Compute) step_compute[s] += a.us;
        if (a.kind == ReplayAction::Kind::Idle) step_idle[s] += a.us;
      }
    const double timed_bus = timed_mean(step_bus, iters);
    const double messages_per_step = timed_mean(step_messages, iters);

    const Summary step = summarize(ctl.max(with.step_us), o.tail_percentiles);
    const Summary pure_step = summarize(ctl.max(pure.step_us), o.tail_percentiles);
    const double compute = ctl.sum(mean_of(with.compute_us)) / n;
    const double idle = ctl.sum(mean_of(with.idle_us)) / n;
    const StepFigures f = step_figures(step.avg, compute, pure_step.avg, timed_bus);
    const std::vector<LatencyStats> latency = over_ranks(step_->latency());
    const std::vector<LatencyStats> launch = over_ranks(step_->launch());
    const std::vector<SizeRow> sizes = size_table(plan.messages, latency);

    SizeOutcome out;
    out.wrong = o.validate && point.validate ? ctl.sum(step_->validate()) : 0;
    out.pass_us = f.step_us;
    out.pass_figure = "step_us.avg";
    out.cells = {{"Step(us)", f.step_us},
                 {"Compute(us)", f.compute_us},
                 {"Exposed(us)", f.exposed_us},
                 {"Pure Comm.(us)", f.pure_us},
                 {"Overlap(%)", f.overlap_pct},
                 {"Bus BW(GB/s)", f.busbw_GBps, 3},
                 {"Messages", messages_per_step, in_.steps > 1 ? 2 : 0}};
    if (o.full) {
      out.cells.push_back({"Min Step(us)", step.min});
      out.cells.push_back({"Max Step(us)", step.max});
      out.cells.push_back({"P50 Step(us)", step.p50});
      out.cells.push_back({"P99 Step(us)", step.p99});
      out.cells.push_back({"Iterations", double(iters), 0});
    }
    for (const auto& [p, v] : step.tails)
      if (!o.full || (p != 50 && p != 99))  // -f shows those already
        out.cells.push_back({"P" + percentile_key(p).substr(1) + " Step(us)", v});
    const std::string algo = common_algorithm();
    if (!algo.empty()) out.cells.push_back({"Algorithm", 0, 0, algo});
    out.extra_lines = size_table_lines(sizes, in_.steps);
    const nlohmann::json groups = groups_json(latency, launch);
    for (const nlohmann::json& g : groups) {
      char line[320];
      std::snprintf(line, sizeof line,
                    "# Process group %s (%d ranks): %.6g messages, %.0f B per step; "
                    "communication %.1f us per step (some message in flight), latencies "
                    "add up to %.1f us",
                    g.at("ranks_text").get<std::string>().c_str(), g.at("size").get<int>(),
                    g.at("messages_per_step").get<double>(), g.at("bytes_per_step").get<double>(),
                    g.at("comm_us").get<double>(), g.at("latency_sum_us").get<double>());
      out.extra_lines.push_back(line);
    }

    nlohmann::json& r = out.record;
    r = {{"bytes", point.bytes},
         {"iterations", iters},
         {"warmup", warmup},
         {"input", input_json()},
         {"fusion", describe(in_.fusion)},
         {"parallel", describe(in_.parallel)},
         {"compute", describe(in_.compute)},
         {"planned_compute_us", timed_mean(step_compute, iters)},
         {"planned_idle_us", timed_mean(step_idle, iters)},
         {"step_us", step},
         {"pure_comm_us", pure_step},
         {"compute_us", f.compute_us},
         {"idle_us", idle},
         {"exposed_comm_us", f.exposed_us},
         {"overlap_pct", f.overlap_pct},
         {"busbw_GBps", f.busbw_GBps},
         {"bus_bytes", timed_bus},
         {"progress_slice_us", kProgressSliceUs},
         {"buffer_bytes", buffers_.total_bytes()},
         {"buffers", buffers_json()},
         {"steps", steps_json(iters)},
         {"algo", algo},
         {"sizes", sizes_json(sizes)},
         {"message_count", plan.messages.size()},
         {"messages_per_step", messages_per_step},
         {"messages", messages_json(latency, launch)},
         {"messages_truncated", plan.messages.size() > kMaxJsonMessages},
         {"skipped_ops", fit_.skipped},
         {"not_replayed", fit_.not_replayed},
         {"wrapped_roots", fit_.wrapped_roots},
         {"process_groups", groups}};
    for (nlohmann::json& g : r["process_groups"]) g.erase("ranks_text");
    return out;
  }

 private:
  struct Steps {  // this rank, per timed iteration
    std::vector<double> step_us, compute_us, idle_us;
  };

  // Warmup step i replays replay step i mod L, timed step j replay step j mod L.
  Steps run_steps(const std::vector<std::vector<ReplayAction>>& steps, int iters, int warmup,
                  bool record) {
    Steps s;
    for (int i = 0; i < warmup + iters; ++i) {
      const size_t j = static_cast<size_t>(i < warmup ? i : i - warmup);
      const StepSample sample = step_->run(steps[j % steps.size()], record && i >= warmup);
      if (i < warmup) continue;
      s.step_us.push_back(sample.step_us);
      s.compute_us.push_back(sample.compute_us);
      s.idle_us.push_back(sample.idle_us);
    }
    return s;
  }

  // Every rank's statistics of each message combined: sums added, min and max over ranks.
  std::vector<LatencyStats> over_ranks(const std::vector<LatencyStats>& mine) const {
    std::vector<double> sum, samples, max, neg_min;
    for (const LatencyStats& l : mine) {
      sum.push_back(l.sum_us);
      samples.push_back(l.samples);
      max.push_back(l.max_us);
      neg_min.push_back(l.samples > 0 ? -l.min_us : -1e300);
    }
    sum = rc_.ctl.sum(sum);
    samples = rc_.ctl.sum(samples);
    max = rc_.ctl.max(max);
    neg_min = rc_.ctl.max(neg_min);
    std::vector<LatencyStats> all(mine.size());
    for (size_t i = 0; i < all.size(); ++i)
      all[i] = {sum[i], samples[i] > 0 ? -neg_min[i] : 0, max[i], samples[i]};
    return all;
  }

  // The allreduce algorithm when every allreduce message uses the same one, else "mixed".
  std::string common_algorithm() const {
    std::string algo;
    for (const CollArgs& a : step_->args()) {
      if (a.coll != Coll::Allreduce) continue;
      const std::string mine = rc_.be.algorithm(a);
      if (algo.empty()) algo = mine;
      if (mine != algo) return "mixed";
    }
    return algo;
  }

  // Bytes of one step: the whole plan, or with --steps the table's mean per training step.
  size_t step_bytes() const { return in_.plan.total_bytes() / in_.steps; }

  nlohmann::json buffers_json() const {
    nlohmann::json sizes = nlohmann::json::array();
    for (size_t b : buffers_.bytes) sizes.push_back(b);
    return {{"count", buffers_.bytes.size()},
            {"messages", in_.plan.messages.size()},
            {"shared", buffers_.bytes.size() < in_.plan.messages.size()},
            {"bytes", buffers_.total_bytes()},
            {"largest_bytes", buffers_.largest_bytes()},
            {"limit_bytes", rc_.opt.mem_limit},
            {"window", buffers_.window},
            {"reuse_waits", buffers_.reuse_waits()},
            {"sizes", sizes},
            {"rule", sharing_text() +
                         "; smallest free buffer that fits, else the largest free one grown, "
                         "else a new one"}};
  }

  // How buffers pass from message to message (share_buffers()).
  std::string sharing_text() const {
    std::string text = "a buffer passes on in a later step";
    if (in_.plan.dependencies) text += ", or after a wait for its message";
    if (buffers_.window == 0)
      return text +
             "; within a step each message has its own (they fit in -M), so no launch "
             "waits for a buffer";
    return text + ", or within a step " + std::to_string(buffers_.window) +
           " or more launches later, the launch then waiting until its previous message has "
           "completed (a buffer per message of a step would exceed -M; " +
           std::to_string(buffers_.reuse_waits()) + " launches wait so)";
  }

  nlohmann::json steps_json(int iters) const {
    const size_t n = in_.steps;
    nlohmann::json j = {{"count", n},
                        {"table_bytes", in_.plan.total_bytes()},
                        {"table_messages", in_.plan.messages.size()},
                        {"bytes_per_step", step_bytes()}};
    if (n == 1) {
      j["split"] = "none: one replay step replays the whole input";
      return j;
    }
    j["split"] = kStepSplitRule;
    j["remainder"] = "spread evenly from the first step";
    j["timed"] = "timed step j replays training step j mod " + std::to_string(n);
    j["timed_steps"] = iters;
    j["timed_table_passes"] = static_cast<double>(iters) / static_cast<double>(n);
    std::vector<size_t> per_step(n);
    for (const ReplayMessage& m : in_.plan.messages) ++per_step.at(static_cast<size_t>(m.segment));
    j["messages_per_step"] = per_step;
    return j;
  }

  nlohmann::json input_json() const {
    nlohmann::json j = {{"name", in_.name}, {"source", in_.source}};
    if (rc_.opt.model.empty()) {
      j["trace"] = rc_.opt.trace;
      j["trace_ops"] = in_.trace.ops.size();
      j["trace_steps"] = in_.trace.iterations();
      j["world_size"] = in_.trace.world_size;
    } else {
      j["model"] = in_.name;
      j["dtype"] = to_string(rc_.opt.dtype);
    }
    if (const MoeModel* m = in_.moe.model) {
      nlohmann::json layers = nlohmann::json::array();
      for (const ReplayMessage& msg : in_.plan.messages)
        if (msg.name.rfind("moe.fwd_dispatch", 0) == 0)
          layers.push_back({{"max_recv_elements", msg.counts->max_recv_total()},
                            {"imbalance", msg.counts->imbalance()}});
      j["moe"] = {{"layers", m->layers},
                  {"hidden", m->hidden},
                  {"experts", m->experts},
                  {"top_k", m->top_k},
                  {"tokens", in_.moe.tokens},
                  {"router", in_.moe.router.str()},
                  {"expert_placement", "expert e on rank e % nranks"},
                  {"per_layer", layers}};
    }
    j["segments"] = in_.plan.segments;
    return j;
  }

  // Per process group (every rank first, where any message runs on all): its messages and
  // bytes per replay step and its communication time per step: the length of the union of
  // its messages' [launch, launch + latency] intervals (means over ranks and timed steps),
  // the time some message of the group was in flight, and the latencies' plain sum.
  nlohmann::json groups_json(const std::vector<LatencyStats>& latency,
                             const std::vector<LatencyStats>& launch) const {
    const ReplayPlan& plan = in_.plan;
    const int n = rc_.ctl.size();
    const double per = 1.0 / static_cast<double>(plan.step_per_segment ? steps_.size() : 1);
    nlohmann::json out = nlohmann::json::array();
    for (int g = -1; g < static_cast<int>(plan.groups.size()); ++g) {
      std::vector<int> ranks;
      if (g < 0)
        for (int r = 0; r < n; ++r) ranks.push_back(r);
      else
        ranks = plan.groups[static_cast<size_t>(g)];
      std::vector<std::pair<double, double>> spans;  // per segment: launch, end
      std::vector<int> segment_of;
      double messages = 0, bytes = 0, sum = 0;
      for (size_t k = 0; k < plan.messages.size(); ++k) {
        const ReplayMessage& m = plan.messages[k];
        if (m.group != g) continue;
        messages += 1;
        bytes += static_cast<double>(m.bytes());
        sum += latency[k].avg_us();
        spans.push_back({launch[k].avg_us(), launch[k].avg_us() + latency[k].avg_us()});
        segment_of.push_back(m.segment);
      }
      if (g < 0 && messages == 0) continue;
      // Union per segment (segments' clocks restart at each replay step's start).
      double busy = 0;
      std::map<int, std::vector<std::pair<double, double>>> by_segment;
      for (size_t i = 0; i < spans.size(); ++i) by_segment[segment_of[i]].push_back(spans[i]);
      for (auto& [segment, list] : by_segment) {
        std::sort(list.begin(), list.end());
        double start = -1, end = -1;
        for (const auto& [a, b] : list) {
          if (a > end) {
            busy += std::max(0.0, end - start);
            start = a;
          }
          end = std::max(end, b);
          if (start < 0) start = a;
        }
        busy += std::max(0.0, end - start);
      }
      out.push_back({{"group", g},
                     {"ranks", ranks},
                     {"ranks_text", g < 0 ? "all" : ranks_text(ranks)},
                     {"size", static_cast<int>(ranks.size())},
                     {"messages_per_step", messages * per},
                     {"bytes_per_step", bytes * per},
                     {"comm_us", busy * per},
                     {"latency_sum_us", sum * per}});
    }
    return out;
  }

  static nlohmann::json latency_json(const LatencyStats& l) {
    return {{"avg", l.avg_us()}, {"min", l.min_us}, {"max", l.max_us}};
  }

  // "count": messages of that size in the plan (with --steps, in the whole table: "per_step"
  // is count / steps).
  nlohmann::json sizes_json(const std::vector<SizeRow>& rows) const {
    nlohmann::json out = nlohmann::json::array();
    for (const SizeRow& r : rows) {
      nlohmann::json row = {{"coll", to_string(r.coll)},
                            {"bytes", r.bytes},
                            {"count", r.per_step},
                            {"latency_us", latency_json(r.latency)}};
      if (in_.steps > 1)
        row["per_step"] = static_cast<double>(r.per_step) / static_cast<double>(in_.steps);
      out.push_back(std::move(row));
    }
    return out;
  }

  nlohmann::json messages_json(const std::vector<LatencyStats>& latency,
                               const std::vector<LatencyStats>& launch) const {
    nlohmann::json out = nlohmann::json::array();
    const auto& msgs = in_.plan.messages;
    for (size_t k = 0; k < msgs.size() && k < kMaxJsonMessages; ++k) {
      const ReplayMessage& m = msgs[k];
      nlohmann::json j = {{"index", k},
                          {"coll", to_string(m.coll)},
                          {"bytes", m.bytes()},
                          {"count", m.count},
                          {"dtype", to_string(m.dtype)},
                          {"name", m.name},
                          {"record", m.record},
                          {"fused", m.members},
                          {"segment", m.segment},
                          {"ready_us", m.ready_us},
                          {"launch_us", launch[k].avg_us()},
                          {"latency_us", latency_json(latency[k])}};
      if (m.coll == Coll::Allreduce && m.op != Op::Sum) j["op"] = to_string(m.op);
      if (m.coll == Coll::Bcast) j["root"] = m.root;
      if (m.group >= 0) j["group"] = m.group;
      const std::string algo = rc_.be.algorithm(step_->args()[k]);
      if (!algo.empty()) j["algo"] = algo;
      out.push_back(std::move(j));
    }
    return out;
  }

  const RunContext& rc_;
  ReplayInput in_;
  BackendFit fit_;
  BufferPlan buffers_;                              // share_buffers(): what step_ allocates
  std::vector<std::vector<ReplayAction>> steps_;    // replay_steps(): timed step j runs j mod size
  std::vector<std::unique_ptr<GroupComm>> groups_;  // per in_.plan.groups: before step_
  std::unique_ptr<StepRunner> step_;                // after in_: it refers to in_.plan
};

}  // namespace

std::unique_ptr<Runner> make_replay_runner(const RunContext& rc) {
  return std::make_unique<ReplayRunner>(rc);
}

}  // namespace cb
