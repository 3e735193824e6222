// Blocking collectives, timed as OMB: each iteration times one call (host clock after the
// backend's sync), then an untimed barrier. Reported: OMB's average / min / max of per-rank
// means, and per iteration the slowest rank (the time a training step sees) with its
// percentiles, collected after the loop; algbw and busbw with nccl-tests' factors.
// With -G N (nccl-tests' CUDA graph launch) the timed iterations are captured into one
// CUDA graph instead, launched N times back to back and timed as a whole: the mean per call
// is total / (N x iterations); the slowest-rank percentiles are over launches.
#include <numeric>
#include <string>
#include <vector>

#include "collective/coll_base.hpp"
#include "collective/runners.hpp"
#include "core/layout.hpp"
#include "gpu/graph.hpp"
#include "gpu/stream.hpp"
#include "harness/fault.hpp"
#include "harness/timer.hpp"

namespace cb {
namespace {

// One rank's timed part of a size: its mean time per call and the samples the slowest-rank
// distribution is made of (per iteration; with -G, per graph launch, divided by its calls).
struct Timed {
  double mean_us = 0;
  std::vector<double> samples_us;
  size_t graph_nodes = 0;  // -G: nodes of the captured graph
};

class CollectiveRunner final : public CollectiveRunnerBase {
 public:
  using CollectiveRunnerBase::CollectiveRunnerBase;

  std::vector<std::string> header_lines() const override {
    std::vector<std::string> lines = CollectiveRunnerBase::header_lines();
    if (const int n = rc_.opt.cuda_graph; n > 0) {
      const std::string g = std::to_string(n);
      lines.push_back("# CUDA graph (-G " + g +
                      "): each size's timed iterations captured into one graph, launched " + g +
                      " times back to back; latency = time of all launches / (" + g +
                      " x iterations); Slowest P50/P99 and tails: over launches (device time "
                      "of a launch / iterations)");
    }
    return lines;
  }

  SizeOutcome measure(const Point& point) override {
    const size_t bytes = point.bytes;
    const Options& o = rc_.opt;
    const Control& ctl = rc_.ctl;
    const int iters = o.iterations_for(bytes);
    const int warmup = o.warmup_for(bytes);
    CollArgs a = args_for(point, 0);
    const double init_us = init_persistent(point);  // persistent: *_init, untimed as OMB

    // A barrier between iterations, as OMB; barrier itself runs back to back (osu_barrier).
    const bool separate = spec_.sized;
    for (int i = 0; i < warmup; ++i) {
      a.root = args_for(point, i).root;
      call(a);
      rc_.be.sync();
      if (separate) ctl.barrier();
    }
    const Timed timed =
        o.cuda_graph > 0 ? graph_launches(point, a, iters) : calls(point, a, iters, separate);

    const double mean = timed.mean_us;
    const double avg = ctl.sum(mean) / ctl.size();
    const double lo = ctl.min(mean), hi = ctl.max(mean);
    const Summary slowest = summarize(ctl.max(timed.samples_us), o.tail_percentiles);
    const double moved = algbw_elements(a) * static_cast<double>(dtype_size(a.dtype));
    const double algbw = avg > 0 ? moved / (avg * 1e-6) / 1e9 : 0;
    const double busbw = algbw * spec_.bus_factor(ctl.size());

    SizeOutcome out;
    if (o.validate && point.validate) validate(point, false, out);
    out.pass_us = avg;
    out.pass_figure = "latency_us.avg";
    out.record = base_record(point, iters, warmup);
    out.record["latency_us"] = {{"avg", avg}, {"min", lo}, {"max", hi}};
    out.record["slowest_rank_us"] = slowest;
    if (rc_.desc.persistent)  // the slowest rank's mean time of one *_init
      out.record["persistent_init_us"] = ctl.max(init_us);
    if (o.cuda_graph > 0)
      out.record["cuda_graph"] = {{"launches", o.cuda_graph},
                                  {"calls_per_graph", iters},
                                  {"graph_nodes", timed.graph_nodes}};
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
    if (a.layout)  // OMB's column under -D
      out.cells.push_back(
          {"Transmit Size", double(layout_moved(*a.layout, a.count) * dtype_size(a.dtype)), 0});
    add_algorithm_cell(a, out.cells);
    return out;
  }

 private:
  // OMB's loop: each call timed on the host up to the backend's sync, then (`separate`) an
  // untimed barrier.
  Timed calls(const Point& point, CollArgs& a, int iters, bool separate) {
    const Control& ctl = rc_.ctl;
    Timed t;
    t.samples_us.resize(static_cast<size_t>(iters));
    const bool die = injected_fault() == Fault::Die && sizes_done_++ == 1 &&
                     ctl.rank() == fault_rank(ctl.size());
    for (int i = 0; i < iters; ++i) {
      if (die && i == iters / 2) die_now();  // mid-loop: the others are inside the collective
      a.root = args_for(point, i).root;
      const double t0 = now_s();
      call(a);
      rc_.be.sync();
      t.samples_us[static_cast<size_t>(i)] = (now_s() - t0) * 1e6;
      if (separate) ctl.barrier();
    }
    t.mean_us = std::accumulate(t.samples_us.begin(), t.samples_us.end(), 0.0) / iters;
    return t;
  }

  // -G (nccl-tests' method): the `iters` calls captured from the backend's stream into one
  // graph (no barriers between them: they run back to back on the stream), instantiated
  // once; after a barrier, N launches back to back, then the backend's sync, timed on the
  // host as a whole. Timing events between the launches (they do not stop the stream) give
  // each launch's device time, per call the samples of the slowest-rank distribution.
  Timed graph_launches(const Point& point, CollArgs& a, int iters) {
    const Control& ctl = rc_.ctl;
    Backend& be = rc_.be;
    const int launches = rc_.opt.cuda_graph;
    gpu::Graph graph;
    agreed(ctl, [&] {  // a rank that cannot capture must not leave the others in a launch
      graph = be.capture([&] {
        for (int i = 0; i < iters; ++i) {
          a.root = args_for(point, i).root;
          be.run(a);
        }
      });
    });
    std::vector<gpu::Event> marks;  // before the first launch and after each
    marks.reserve(static_cast<size_t>(launches) + 1);
    for (int k = 0; k <= launches; ++k) marks.emplace_back(true);
    const gpu::StreamHandle stream = be.stream();

    ctl.barrier();
    const double t0 = now_s();
    marks[0].record(stream);
    for (size_t k = 0; k < static_cast<size_t>(launches); ++k) {
      graph.launch(stream);
      marks[k + 1].record(stream);
    }
    be.sync();
    const double total_us = (now_s() - t0) * 1e6;

    Timed t;
    t.mean_us = total_us / (static_cast<double>(launches) * iters);
    t.graph_nodes = graph.nodes();
    for (size_t k = 0; k < static_cast<size_t>(launches); ++k)
      t.samples_us.push_back(gpu::Event::elapsed_s(marks[k], marks[k + 1]) * 1e6 / iters);
    return t;
  }

  int sizes_done_ = 0;
};

}  // namespace

std::unique_ptr<Runner> make_collective_runner(const RunContext& rc) {
  return std::make_unique<CollectiveRunner>(rc);
}

}  // namespace cb
