// Blocking collectives, timed as OMB: each iteration times one call (host clock after the
// backend's sync), then an untimed barrier. Reported: OMB's average / min / max of per-rank
// means, and per iteration the slowest rank (the time a training step sees) with its
// percentiles, collected after the loop; algbw and busbw with nccl-tests' factors.
#include <numeric>

#include "collective/coll_base.hpp"
#include "collective/runners.hpp"
#include "harness/fault.hpp"
#include "harness/timer.hpp"

namespace cb {
namespace {

class CollectiveRunner final : public CollectiveRunnerBase {
 public:
  using CollectiveRunnerBase::CollectiveRunnerBase;

  SizeOutcome measure(const Point& point) override {
    const size_t bytes = point.bytes;
    const Options& o = rc_.opt;
    const Control& ctl = rc_.ctl;
    const int iters = o.iterations_for(bytes);
    const int warmup = o.warmup_for(bytes);
    CollArgs a = args_for(point, 0);

    // A barrier between iterations, as OMB; barrier itself runs back to back (osu_barrier).
    const bool separate = spec_.sized;
    for (int i = 0; i < warmup; ++i) {
      a.root = args_for(point, i).root;
      rc_.be.run(a);
      rc_.be.sync();
      if (separate) ctl.barrier();
    }
    std::vector<double> samples(static_cast<size_t>(iters));
    const bool die =
        injected_fault() == Fault::Die && sizes_done_++ == 1 && ctl.rank() == fault_rank(ctl.size());
    for (int i = 0; i < iters; ++i) {
      if (die && i == iters / 2) die_now();  // mid-loop: the others are inside the collective
      a.root = args_for(point, i).root;
      const double t0 = now_s();
      rc_.be.run(a);
      rc_.be.sync();
      samples[static_cast<size_t>(i)] = (now_s() - t0) * 1e6;
      if (separate) ctl.barrier();
    }

    const double mean = std::accumulate(samples.begin(), samples.end(), 0.0) / iters;
    const double avg = ctl.sum(mean) / ctl.size();
    const double lo = ctl.min(mean), hi = ctl.max(mean);
    const Summary slowest = summarize(ctl.max(samples), o.tail_percentiles);
    const size_t moved = spec_.algbw_elements(a.count, ctl.size()) * dtype_size(a.dtype);
    const double algbw = avg > 0 ? double(moved) / (avg * 1e-6) / 1e9 : 0;
    const double busbw = algbw * spec_.bus_factor(ctl.size());

    SizeOutcome out;
    out.wrong = o.validate && point.validate ? validate(point, false) : 0;
    out.pass_us = avg;
    out.pass_figure = "latency_us.avg";
    out.record = base_record(point, iters, warmup);
    out.record["latency_us"] = {{"avg", avg}, {"min", lo}, {"max", hi}};
    out.record["slowest_rank_us"] = slowest;
    if (spec_.sized) {  // barrier moves no data
      out.record["algbw_GBps"] = algbw;
      out.record["busbw_GBps"] = busbw;
      out.record["bus_factor"] = spec_.bus_factor(ctl.size());
    }

    out.cells.push_back({"Avg Latency(us)", avg});
    if (o.full) {
      out.cells.push_back({"Min Latency(us)", lo});
      out.cells.push_back({"Max Latency(us)", hi});
      out.cells.push_back({"Iterations", double(iters), 0});
      out.cells.push_back({"Slowest P50(us)", slowest.p50});
      out.cells.push_back({"Slowest P99(us)", slowest.p99});
      if (spec_.sized) out.cells.push_back({"Alg BW(GB/s)", algbw});
    }
    if (spec_.sized) out.cells.push_back({"Bus BW(GB/s)", busbw});
    for (const auto& [p, v] : slowest.tails)
      out.cells.push_back({"P" + percentile_key(p).substr(1) + " Tail Lat(us)", v});
    add_algorithm_cell(a, out.cells);
    return out;
  }

 private:
  int sizes_done_ = 0;
};

}  // namespace

std::unique_ptr<Runner> make_collective_runner(const RunContext& rc) {
  return std::make_unique<CollectiveRunner>(rc);
}

}  // namespace cb
