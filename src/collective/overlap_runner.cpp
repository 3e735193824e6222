// Non-blocking collectives and their overlap with computation, the OMB way, with OMB's
// weaknesses fixed: (1) pure communication time per rank; (2) every rank computes for the
// same target, the slowest rank's pure time (OMB calibrates each rank to its own); (3) the
// operation is started, the compute runs in max(1, t) chunks with a test call after each
// of the t chunks (-t), then wait. Reported: OMB's overlap figure and IMB's, both per size.
// With device buffers (-d cuda) the compute is a GPU kernel on the rank's compute stream
// instead (GpuCompute), where DL frameworks compute while a collective is in flight; the
// host calls test at the same moments while it waits for the kernel. Where the backend's
// collectives are stream operations (nccl), CUDA events around each start give their
// device time too.
#include <memory>
#include <numeric>
#include <optional>

#include "collective/coll_base.hpp"
#include "collective/runners.hpp"
#include "gpu/stream.hpp"
#include "harness/compute.hpp"
#include "harness/fault.hpp"
#include "harness/timer.hpp"

namespace cb {
namespace {

struct Overlapped {  // per-rank means over the iterations, microseconds
  double overall = 0, compute = 0, init = 0, test = 0, wait = 0;
  double device = 0;  // the collective's device time (CUDA events), where measured
};

// Timing events on the backend's stream around a start, recorded just before and after it
// (a few hundred ns each, inside the host times): the collective's device time, launch
// included, as `start.record(); op; end.record()` measures it in a framework.
struct DeviceTimer {
  gpu::StreamHandle stream;
  gpu::Event before{true}, after{true};
  std::vector<double> us;
  double elapsed_us() const { return gpu::Event::elapsed_s(before, after) * 1e6; }
};

double mean_of(const std::vector<double>& v) {
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

class OverlapRunner final : public CollectiveRunnerBase {
 public:
  using CollectiveRunnerBase::CollectiveRunnerBase;

  void prepare() override {
    CollectiveRunnerBase::prepare();
    if (on_device()) agreed(rc_.ctl, [&] { gpu_.emplace(); });
  }

  std::vector<std::string> header_lines() const override {
    auto lines = CollectiveRunnerBase::header_lines();
    if (on_device())
      lines.push_back(
          "# Overall = Coll. Init + Compute + Wait; compute: a GPU kernel on every SM, on a "
          "compute stream beside the backend's, for the target = slowest rank's pure "
          "communication time; the host makes the test calls while it runs; test calls: " +
          std::to_string(rc_.opt.test_calls));
    else
      lines.push_back(
          "# Overall = Coll. Init + Compute + Test + Wait; compute target = slowest "
          "rank's pure communication time; test calls: " +
          std::to_string(rc_.opt.test_calls));
    return lines;
  }

  SizeOutcome measure(const Point& point) override {
    const size_t bytes = point.bytes;
    const Options& o = rc_.opt;
    const Control& ctl = rc_.ctl;
    const int n = ctl.size();
    const int iters = o.iterations_for(bytes);
    const int warmup = o.warmup_for(bytes);

    std::optional<DeviceTimer> pure_dev = device_timer(), ovl_dev = device_timer();
    const double pure = pure_comm(point, iters, warmup, pure_dev);  // this rank's mean, us
    const double target = ctl.max(pure);
    const Overlapped ov = overlapped(point, iters, warmup, target, ovl_dev);

    const double pure_avg = ctl.sum(pure) / n;
    const double overall = ctl.sum(ov.overall) / n, compute = ctl.sum(ov.compute) / n;
    const double init = ctl.sum(ov.init) / n, test = ctl.sum(ov.test) / n;
    const double wait = ctl.sum(ov.wait) / n;
    // OMB: overlap = 100 - (overall - compute) / pure * 100, at least 0.
    const double omb =
        pure_avg > 0 ? std::clamp(100.0 - (overall - compute) / pure_avg * 100.0, 0.0, 100.0) : 0.0;
    const double imb = imb_overlap(pure, ov);

    SizeOutcome out;
    if (o.validate && point.validate) validate(point, true, out);
    out.pass_us = pure_avg;  // the communication time (what compare.py's latency reads)
    out.pass_figure = "pure_comm_us.avg";
    out.record = base_record(point, iters, warmup);
    out.record["test_calls"] = o.test_calls;
    out.record["pure_comm_us"] = {{"avg", pure_avg}, {"min", ctl.min(pure)}, {"max", target}};
    out.record["compute_target_us"] = target;
    out.record["overall_us"] = overall;
    out.record["compute_us"] = compute;
    out.record["init_us"] = init;
    out.record["test_us"] = test;
    out.record["wait_us"] = wait;
    out.record["overlap_pct"] = omb;
    out.record["overlap_pct_imb"] = imb;
    out.record["compute"] = gpu_ ? "gpu-kernel" : "cpu";
    if (pure_dev)
      out.record["device_time_us"] = {{"pure_comm", ctl.sum(mean_of(pure_dev->us)) / n},
                                      {"overlapped", ctl.sum(ov.device) / n}};

    out.cells = {{"Overall(us)", overall}, {"Compute(us)", compute}, {"Coll. Init(us)", init},
                 {"Test(us)", test},       {"Wait(us)", wait},       {"Pure Comm.(us)", pure_avg},
                 {"Overlap(%)", omb},      {"IMB Overlap(%)", imb}};
    if (o.full) {
      out.cells.push_back({"Min Comm.(us)", ctl.min(pure)});
      out.cells.push_back({"Max Comm.(us)", target});
      out.cells.push_back({"Iterations", double(iters), 0});
    }
    add_algorithm_cell(args_for(point, 0), out.cells);
    return out;
  }

 private:
  bool on_device() const { return rc_.opt.mem == Mem::Cuda; }

  // Events for the device time: device buffers on a backend whose collectives are
  // operations on its stream (stream() is the legacy stream, nullptr, for the others).
  std::optional<DeviceTimer> device_timer() const {
    if (!on_device() || rc_.be.stream() == nullptr) return std::nullopt;
    return DeviceTimer{rc_.be.stream()};
  }

  std::unique_ptr<Request> start(const CollArgs& a, std::optional<DeviceTimer>& dev) {
    if (dev) dev->before.record(dev->stream);
    auto req = rc_.be.start(a);
    if (dev) dev->after.record(dev->stream);
    return req;
  }

  // --vary-data: iteration i's data (generation i + 1) stored before the barrier that
  // precedes it, untimed.
  void stamp_before(const Point& point, int i) {
    if (rc_.opt.vary_data) stamp_data(args_for(point, i), static_cast<uint32_t>(i) + 1);
  }

  double pure_comm(const Point& point, int iters, int warmup, std::optional<DeviceTimer>& dev) {
    std::vector<double> samples;
    stamp_before(point, 0);
    if (rc_.opt.vary_data) rc_.ctl.barrier();
    for (int i = 0; i < warmup + iters; ++i) {
      const CollArgs a = args_for(point, i);
      const double t0 = now_s();
      start(a, dev)->wait();
      rc_.be.sync();
      if (i >= warmup) {
        samples.push_back((now_s() - t0) * 1e6);
        if (dev) dev->us.push_back(dev->elapsed_us());
      }
      stamp_before(point, i + 1);
      rc_.ctl.barrier();
    }
    return mean_of(samples);
  }

  // The compute phase with the GPU kernel: launched for the whole target, then the host
  // waits for it, making test call c when the CPU compute would (after chunk c + 1). The
  // tests run while the kernel computes, so they are part of the compute's span here,
  // which is returned (launch to completion seen), and t_test says how long they took.
  double gpu_compute(Request& req, double target_s, int chunks, int tests, double& t_test) {
    const double t0 = now_s();
    gpu_->start(target_s);
    for (int c = 0; c < tests; ++c) {
      const double due = t0 + target_s * (c + 1) / chunks;
      while (now_s() < due) {
      }
      const double t1 = now_s();
      req.test();
      t_test += now_s() - t1;
    }
    while (!gpu_->done()) {
    }
    return now_s() - t0;
  }

  Overlapped overlapped(const Point& point, int iters, int warmup, double target_us,
                        std::optional<DeviceTimer>& dev) {
    const int tests = rc_.opt.test_calls;
    const int chunks = std::max(1, tests);
    const double chunk_s = target_us * 1e-6 / chunks;
    std::vector<double> overall, compute, init, test, wait;
    const bool die = injected_fault() == Fault::Die && sizes_done_++ == 1 &&
                     rc_.ctl.rank() == fault_rank(rc_.ctl.size());
    stamp_before(point, 0);
    if (rc_.opt.vary_data) rc_.ctl.barrier();
    for (int i = 0; i < warmup + iters; ++i) {
      const CollArgs a = args_for(point, i);
      double t_compute = 0, t_test = 0;
      const double t_start = now_s();
      auto req = start(a, dev);
      if (die && i == warmup + iters / 2) die_now();  // started: the others are inside it
      const double t_init = now_s() - t_start;
      if (gpu_) {
        t_compute = gpu_compute(*req, target_us * 1e-6, chunks, tests, t_test);
      } else {
        for (int c = 0; c < chunks; ++c) {
          t_compute += compute_.run_for(chunk_s);
          const double t1 = now_s();
          if (c < tests) {
            req->test();
            t_test += now_s() - t1;
          }
        }
      }
      const double t_wait0 = now_s();
      req->wait();
      rc_.be.sync();
      const double t_end = now_s();
      if (i >= warmup) {
        overall.push_back((t_end - t_start) * 1e6);
        compute.push_back(t_compute * 1e6);
        init.push_back(t_init * 1e6);
        test.push_back(t_test * 1e6);
        wait.push_back((t_end - t_wait0) * 1e6);
        if (dev) dev->us.push_back(dev->elapsed_us());
      }
      stamp_before(point, i + 1);
      rc_.ctl.barrier();
    }
    return {mean_of(overall), mean_of(compute), mean_of(init),
            mean_of(test),    mean_of(wait),    dev ? mean_of(dev->us) : 0.0};
  }

  // IMB-NBC: on the rank with the longest overlapped time,
  // overlap = 100 * clamp((t_pure + t_comp - t_ovrl) / max(t_pure, t_comp), 0, 1).
  double imb_overlap(double pure, const Overlapped& ov) const {
    const double worst = rc_.ctl.max(ov.overall);
    const bool mine = ov.overall == worst;
    // The lowest rank holding the maximum reports its figure.
    const int reporter = static_cast<int>(rc_.ctl.min(mine ? rc_.ctl.rank() : rc_.ctl.size()));
    const bool me = rc_.ctl.rank() == reporter;
    const double denom = std::max(pure, ov.compute);
    const double local =
        denom > 0 ? std::clamp((pure + ov.compute - ov.overall) / denom, 0.0, 1.0) * 100.0 : 0.0;
    return rc_.ctl.sum(me ? local : 0.0);
  }

  DummyCompute compute_;
  std::optional<GpuCompute> gpu_;  // -d cuda: the compute runs on the GPU
  int sizes_done_ = 0;
};

}  // namespace

std::unique_ptr<Runner> make_overlap_runner(const RunContext& rc) {
  return std::make_unique<OverlapRunner>(rc);
}

}  // namespace cb
