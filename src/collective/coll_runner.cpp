// Blocking collectives, timed as OMB: each iteration times one call (host clock after the
// backend's sync), then an untimed barrier. Reported: OMB's average / min / max of per-rank
// means, and per iteration the slowest rank (the time a training step sees) with its
// percentiles, collected after the loop; algbw and busbw with nccl-tests' factors.
// With -G N (nccl-tests' CUDA graph launch) the timed iterations are captured into one
// CUDA graph instead, launched N times back to back and timed as a whole: the mean per call
// is total / (N x iterations); the slowest-rank percentiles are over launches.
// nccl-tests' -a picks the per-rank figure the table and algbw use, --agg_iters runs several
// operations per timed iteration, --blocking 0-2 its other loops (3 is OMB's), -I writes
// every iteration's time. The loop's own cost per iteration (the same loop without the
// operation) is measured after it and recorded as harness_overhead_us.
#include <algorithm>
#include <ctime>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "collective/coll_base.hpp"
#include "collective/runners.hpp"
#include "core/errors.hpp"
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
    const bool rotate = spec_.rooted && o.root.rotate;
    for (int i = 0; i < warmup; ++i) {
      if (rotate) a.root = root_for(i);
      if (ring()) place(a, static_cast<uint64_t>(i));
      operation(a);
      rc_.be.sync();
      if (separate) rc_.be.iteration_barrier(ctl);
    }
    const Timed timed = o.cuda_graph > 0  ? graph_launches(point, a, iters)
                        : o.blocking == 3 ? calls(a, iters, separate)
                                          : whole_loop(a, iters);
    const double overhead_us = ctl.max(loop_overhead_us(iters));

    const double mean = timed.mean_us;
    const double avg = ctl.sum(mean) / ctl.size();
    const double lo = ctl.min(mean), hi = ctl.max(mean);
    // -a (nccl-tests): the per-rank figure the table and the bandwidths use; rank 0's is
    // the same on every rank (a sum with the others' zero).
    const double rank0 = ctl.sum(ctl.is_root() ? mean : 0.0);
    const double shown = o.average == 0 ? rank0 : o.average == 2 ? lo : o.average == 3 ? hi : avg;
    const std::vector<double> slowest_samples = ctl.max(timed.samples_us);
    const Summary slowest = summarize(slowest_samples, o.tail_percentiles);
    const double moved = algbw_elements(a) * static_cast<double>(dtype_size(a.dtype));
    const double algbw = shown > 0 ? moved / (shown * 1e-6) / 1e9 : 0;
    const double busbw = algbw * spec_.bus_factor(ctl.size());

    SizeOutcome out;
    if (o.validate && point.validate) validate(point, false, out);
    out.pass_us = avg;  // --repeat's median pass: by the average, whatever -a shows
    out.pass_figure = "latency_us.avg";
    out.record = base_record(point, iters, warmup);
    out.record["latency_us"] = {{"avg", avg}, {"min", lo}, {"max", hi}};
    if (o.average != 1) out.record["latency_us"]["shown"] = shown;
    out.record["latency_us"]["rank0"] = rank0;
    out.record["slowest_rank_us"] = slowest;
    out.record["harness_overhead_us"] = overhead_us;
    if (o.agg_iters > 1) out.record["agg_iters"] = o.agg_iters;
    if (o.per_iter)
      out.record["per_iter"] = per_iteration(slowest_samples, timed.samples_us, out.cells);
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

    static constexpr const char* kShown[] = {"Rank0 Latency(us)", "Avg Latency(us)",
                                             "Min Latency(us)", "Max Latency(us)"};
    std::vector<Cell> cells{{kShown[o.average], shown}};
    if (o.full) {
      if (o.average != 2) cells.push_back({"Min Latency(us)", lo});
      if (o.average != 3) cells.push_back({"Max Latency(us)", hi});
      if (o.average != 1) cells.push_back({"Avg Latency(us)", avg});
      cells.push_back({"Iterations", double(iters), 0});
      cells.push_back({"Slowest P50(us)", slowest.p50});
      cells.push_back({"Slowest P99(us)", slowest.p99});
      if (spec_.sized) cells.push_back({"Alg BW(GB/s)", algbw});
    }
    if (spec_.sized) cells.push_back({"Bus BW(GB/s)", busbw});
    for (const auto& [p, v] : slowest.tails)
      cells.push_back({"P" + percentile_key(p).substr(1) + " Tail Lat(us)", v});
    if (a.layout)  // OMB's column under -D
      cells.push_back(
          {"Transmit Size", double(layout_moved(*a.layout, a.count) * dtype_size(a.dtype)), 0});
    cells.insert(cells.end(), out.cells.begin(), out.cells.end());  // -I's columns
    out.cells = std::move(cells);
    add_algorithm_cell(a, out.cells);
    if (o.timestamps) stamp(out);
    return out;
  }

 private:
  // One timed operation: the call, or --agg_iters calls at once (NCCL: one group).
  void operation(const CollArgs& a) {
    const int agg = rc_.opt.agg_iters;
    if (agg == 1) return call(a);
    if (!a.persistent) return rc_.be.run_aggregated(a, agg);
    for (int k = 0; k < agg; ++k) call(a);  // a persistent request: started and waited each time
  }

  // OMB's loop (--blocking 3): each iteration timed on the host up to the backend's sync,
  // then (`separate`) an untimed barrier. Only what OMB's loop has between its clock reads
  // is there: the root changes only when it rotates (-k rotate). Not inlined, so that an
  // instruction profile can tell the loop's own instructions (scripts/omb_fidelity.sh
  // --callgrind collects inside it alone).
  [[gnu::noinline]] Timed calls(CollArgs& a, int iters, bool separate) {
    const Control& ctl = rc_.ctl;
    Backend& be = rc_.be;
    Timed t;
    t.samples_us.resize(static_cast<size_t>(iters));
    const bool rotate = spec_.rooted && rc_.opt.root.rotate;
    const bool die = injected_fault() == Fault::Die && sizes_done_++ == 1 &&
                     ctl.rank() == fault_rank(ctl.size());
    const double per_op = 1e6 / rc_.opt.agg_iters;
    // --off-cache: each iteration's buffers from the rings; --vary-data: iteration i's data
    // (generation i + 1) stored before the barrier that precedes it, untimed.
    const bool moves = ring(), vary = rc_.opt.vary_data && separate;
    // The same call every iteration: bound once, its arguments resolved (Backend::bind).
    const bool same = !rotate && !moves && rc_.opt.agg_iters == 1 && !a.persistent;
    const std::function<void()> bound = same ? be.bind(a) : std::function<void()>();
    if (vary) {
      if (moves) place(a, 0);
      stamp_data(a, 1);
      be.iteration_barrier(ctl);
    }
    for (int i = 0; i < iters; ++i) {
      if (die && i == iters / 2) die_now();  // mid-loop: the others are inside the collective
      if (rotate) a.root = root_for(i);
      if (moves) place(a, static_cast<uint64_t>(i));
      const double t0 = now_s();
      if (bound)
        bound();
      else
        operation(a);
      be.sync();
      t.samples_us[static_cast<size_t>(i)] = (now_s() - t0) * per_op;
      if (vary && i + 1 < iters) {
        if (moves) place(a, static_cast<uint64_t>(i) + 1);
        stamp_data(a, static_cast<uint32_t>(i) + 2);
      }
      if (separate) be.iteration_barrier(ctl);
    }
    t.mean_us = std::accumulate(t.samples_us.begin(), t.samples_us.end(), 0.0) / iters;
    return t;
  }

  // nccl-tests' other loops, timed as a whole after a barrier (per operation: the total /
  // (iterations x --agg_iters)): --blocking 0 waits once after the last iteration, 1 waits
  // and barriers after each, 2 waits after each. One sample: the loop's mean.
  Timed whole_loop(CollArgs& a, int iters) {
    const Control& ctl = rc_.ctl;
    Backend& be = rc_.be;
    const int mode = rc_.opt.blocking;
    const bool rotate = spec_.rooted && rc_.opt.root.rotate;
    ctl.barrier();
    const double t0 = now_s();
    for (int i = 0; i < iters; ++i) {
      if (rotate) a.root = root_for(i);
      if (ring()) place(a, static_cast<uint64_t>(i));  // --off-cache: inside this timed loop
      operation(a);
      if (mode != 0) be.sync();
      if (mode == 1) be.iteration_barrier(ctl);
    }
    be.sync();
    Timed t;
    t.mean_us = (now_s() - t0) * 1e6 / (static_cast<double>(iters) * rc_.opt.agg_iters);
    t.samples_us = {t.mean_us};
    return t;
  }

  // The timed loop's own cost per iteration, us: OMB's loop with the operation left out
  // (two clock reads, the backend's sync, the sample's store; no barrier, which is untimed).
  // What a latency figure holds beyond the operation itself; OMB's holds its two MPI_Wtime.
  double loop_overhead_us(int iters) {
    Backend& be = rc_.be;
    std::vector<double> samples(static_cast<size_t>(iters));
    for (int i = 0; i < iters; ++i) {
      const double t0 = now_s();
      be.sync();
      samples[static_cast<size_t>(i)] = (now_s() - t0) * 1e6;
    }
    return std::accumulate(samples.begin(), samples.end(), 0.0) / iters;
  }

  // -I (nccl-tests' per-iteration report, JSON version 3): the slowest rank's time of every
  // iteration, its summary without the first -K iterations, every rank's times; the table
  // gets nccl-tests' i_min, i_max, i_p99 and i_cv% columns.
  nlohmann::json per_iteration(const std::vector<double>& slowest, const std::vector<double>& mine,
                               std::vector<Cell>& cells) const {
    const Control& ctl = rc_.ctl;
    const size_t n = slowest.size();
    const size_t skip = std::min(static_cast<size_t>(rc_.opt.per_iter_skip), n - 1);
    const Summary s =
        summarize(std::vector<double>(slowest.begin() + static_cast<long>(skip), slowest.end()),
                  std::vector<double>{95});
    const double cv = s.avg > 0 ? 100 * s.stddev / s.avg : 0;
    std::vector<double> rows(n * static_cast<size_t>(ctl.size()), 0.0);  // rank-major
    const auto row = [&](int r) { return rows.begin() + static_cast<long>(n * size_t(r)); };
    std::copy(mine.begin(), mine.end(), row(ctl.rank()));
    rows = ctl.sum(rows);
    nlohmann::json per_rank = nlohmann::json::array();
    for (int r = 0; r < ctl.size(); ++r)
      per_rank.push_back(std::vector<double>(row(r), row(r + 1)));
    cells.push_back({"i_min(us)", s.min});
    cells.push_back({"i_max(us)", s.max});
    cells.push_back({"i_p99(us)", s.p99});
    cells.push_back({"i_cv(%)", cv});
    return {{"skipped_iterations", skip},
            {"min_us", s.min},
            {"max_us", s.max},
            {"avg_us", s.avg},
            {"p50_us", s.p50},
            {"p95_us", s.tails.empty() ? s.p99 : s.tails.front().second},
            {"p99_us", s.p99},
            {"stdev_us", s.stddev},
            {"cv_pct", cv},
            {"times_us", slowest},
            {"per_rank_times_us", per_rank}};
  }

  // -S (nccl-tests' report_timestamps): rank 0's local wall-clock time when the row is done.
  static void stamp(SizeOutcome& out) {
    char text[32] = {};
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &local);
    out.cells.push_back({"Timestamp", 0, 0, text});
    out.record["timestamp"] = text;
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
      // On one rank NCCL has nothing to move for many calls (bcast, in-place allreduce and
      // reduce_scatter) and enqueues nothing; with more ranks an empty capture means the
      // calls went to another stream.
      if (graph.nodes() == 0 && ctl.size() > 1)
        throw RuntimeError(
            "CUDA graph capture recorded nothing: the calls enqueued no work on the captured "
            "stream");
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
