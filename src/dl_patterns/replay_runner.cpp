#include "dl_patterns/replay_runner.hpp"

#include <algorithm>
#include <numeric>

#include "dl_patterns/replay_input.hpp"
#include "dl_patterns/replay_step.hpp"
#include "core/errors.hpp"
#include "harness/sizes.hpp"
#include "harness/stats.hpp"

namespace cb {
namespace {

using namespace cb::dl;

constexpr size_t kMaxJsonMessages = 10000;  // keeps the document small for huge traces

double mean_of(const std::vector<double>& v) {
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

class ReplayRunner final : public Runner {
 public:
  explicit ReplayRunner(const RunContext& rc) : rc_(rc) {}

  void prepare() override {
    const Options& o = rc_.opt;
    in_ = load_replay_input(o);
    if (!o.export_trace.empty()) {  // write the plan and replay nothing
      if (rc_.ctl.is_root()) {
        Trace t = to_trace(in_.plan, in_.name,
                           in_.source + " --fusion " + o.fusion + " --compute " + o.compute);
        t.world_size = in_.trace.world_size;
        try {
          save_trace(t, o.export_trace);
        } catch (const TraceError& e) {
          throw UsageError(std::string("--export-trace: ") + e.what());
        }
      }
      return;
    }
    const int n = rc_.ctl.size();
    fit_ = fit_to_backend(in_, rc_.be, o, n);
    const size_t need = replay_buffer_bytes(in_.plan, n);
    if (need > o.mem_limit)
      throw UsageError("the replay needs " + std::to_string(need) +
                       " B of buffers per process, more than the limit of " +
                       format_bytes(o.mem_limit) + " (-M/--mem-limit)");
    step_ = std::make_unique<StepRunner>(rc_.be, rc_.ctl, in_.plan, o.mem, o.algo);
  }

  std::vector<std::string> header_lines() const override {
    std::vector<std::string> lines{in_.input_line};
    const std::vector<std::string> plan = describe_plan(in_);
    lines.insert(lines.end(), plan.begin(), plan.end());
    if (!step_) {
      lines.push_back("# Exported " + std::to_string(in_.plan.messages.size()) + " ops to " +
                      rc_.opt.export_trace + " (--export-trace); nothing replayed");
      return lines;
    }
    lines.insert(lines.end(), fit_.notes.begin(), fit_.notes.end());
    lines.push_back(
        "# Step: barrier; each message started non-blocking once ready (allreduce in place, " +
        std::to_string(kMaxInFlight) +
        " in flight at most, counted from the oldest); wait for all at the end. Exposed = Step "
        "- Compute; Overlap = 1 - Exposed / Pure Comm.");
    lines.push_back(std::string("# Buffers on ") + (rc_.opt.mem == Mem::Cuda ? "DEVICE" : "HOST") +
                    ", " + std::to_string(replay_buffer_bytes(in_.plan, rc_.ctl.size())) +
                    " B per rank");
    return lines;
  }

  std::vector<Point> points() const override {
    if (!step_) return {};
    return {{in_.plan.total_bytes(), rc_.opt.algo}};
  }

  SizeOutcome measure(const Point& point) override {
    const Options& o = rc_.opt;
    const Control& ctl = rc_.ctl;
    const int n = ctl.size();
    const int iters = o.iterations_for(point.bytes), warmup = o.warmup_for(point.bytes);
    const ReplayPlan& plan = in_.plan;

    const Steps with = run_steps(plan.actions, iters, warmup, true);
    const bool has_compute = plan.compute_us() + plan.idle_us() > 0;
    const Steps pure = has_compute ? run_steps(without_compute(plan.actions), iters, warmup, false)
                                   : with;  // without compute the step is pure communication

    const Summary step = summarize(ctl.max(with.step_us), o.tail_percentiles);
    const Summary pure_step = summarize(ctl.max(pure.step_us), o.tail_percentiles);
    const double compute = ctl.sum(mean_of(with.compute_us)) / n;
    const double idle = ctl.sum(mean_of(with.idle_us)) / n;
    const StepFigures f =
        step_figures(step.avg, compute, pure_step.avg, bus_bytes(plan.messages, n));
    const std::vector<LatencyStats> latency = over_ranks(step_->latency());
    const std::vector<LatencyStats> launch = over_ranks(step_->launch());
    const std::vector<SizeRow> sizes = size_table(plan.messages, latency);

    SizeOutcome out;
    out.wrong = o.validate ? ctl.sum(step_->validate()) : 0;
    out.cells = {{"Step(us)", f.step_us},
                 {"Compute(us)", f.compute_us},
                 {"Exposed(us)", f.exposed_us},
                 {"Pure Comm.(us)", f.pure_us},
                 {"Overlap(%)", f.overlap_pct},
                 {"Bus BW(GB/s)", f.busbw_GBps, 3},
                 {"Messages", double(plan.messages.size()), 0}};
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
    out.extra_lines = size_table_lines(sizes);

    nlohmann::json& r = out.record;
    r = {{"bytes", point.bytes},
         {"iterations", iters},
         {"warmup", warmup},
         {"input", input_json()},
         {"fusion", describe(in_.fusion)},
         {"compute", describe(in_.compute)},
         {"planned_compute_us", plan.compute_us()},
         {"planned_idle_us", plan.idle_us()},
         {"step_us", step},
         {"pure_comm_us", pure_step},
         {"compute_us", f.compute_us},
         {"idle_us", idle},
         {"exposed_comm_us", f.exposed_us},
         {"overlap_pct", f.overlap_pct},
         {"busbw_GBps", f.busbw_GBps},
         {"bus_bytes", bus_bytes(plan.messages, n)},
         {"progress_slice_us", kProgressSliceUs},
         {"buffer_bytes", replay_buffer_bytes(plan, n)},
         {"algo", algo},
         {"sizes", sizes_json(sizes)},
         {"message_count", plan.messages.size()},
         {"messages", messages_json(latency, launch)},
         {"messages_truncated", plan.messages.size() > kMaxJsonMessages},
         {"skipped_ops", fit_.skipped},
         {"wrapped_roots", fit_.wrapped_roots}};
    return out;
  }

 private:
  struct Steps {  // this rank, per timed iteration
    std::vector<double> step_us, compute_us, idle_us;
  };

  Steps run_steps(const std::vector<ReplayAction>& actions, int iters, int warmup, bool record) {
    Steps s;
    for (int i = 0; i < warmup + iters; ++i) {
      const StepSample sample = step_->run(actions, record && i >= warmup);
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
    j["segments"] = in_.plan.segments;
    return j;
  }

  static nlohmann::json latency_json(const LatencyStats& l) {
    return {{"avg", l.avg_us()}, {"min", l.min_us}, {"max", l.max_us}};
  }

  static nlohmann::json sizes_json(const std::vector<SizeRow>& rows) {
    nlohmann::json out = nlohmann::json::array();
    for (const SizeRow& r : rows)
      out.push_back({{"coll", to_string(r.coll)},
                     {"bytes", r.bytes},
                     {"count", r.per_step},
                     {"latency_us", latency_json(r.latency)}});
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
      const std::string algo = rc_.be.algorithm(step_->args()[k]);
      if (!algo.empty()) j["algo"] = algo;
      out.push_back(std::move(j));
    }
    return out;
  }

  const RunContext& rc_;
  ReplayInput in_;
  BackendFit fit_;
  std::unique_ptr<StepRunner> step_;  // after in_: it refers to in_.plan
};

}  // namespace

std::unique_ptr<Runner> make_replay_runner(const RunContext& rc) {
  return std::make_unique<ReplayRunner>(rc);
}

}  // namespace cb
