// bench_main(): the one driver behind every benchmark executable.
#include "harness/bench.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string_view>
#include <thread>

#include "backends/make_backend.hpp"
#include "config.hpp"
#include "core/mpi_check.hpp"
#include "core/verify.hpp"
#include "gpu/device.hpp"
#include "harness/environment.hpp"
#include "harness/interrupt.hpp"
#include "harness/progress.hpp"
#include "harness/runner.hpp"
#include "harness/stats.hpp"
#include "harness/watchdog.hpp"

namespace cb {
namespace {

class MpiSession {
 public:
  // MPI_THREAD_MULTIPLE only for the engine's progress thread and benchmarks whose threads
  // call MPI (BenchDesc::thread_multiple): it makes MPICH take locks on every call, which
  // would slow the MPI baseline.
  MpiSession(int* argc, char*** argv, bool thread_multiple) {
    int level = thread_multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED, provided = 0;
    for (int i = 1; i < *argc; ++i)
      if (std::string_view((*argv)[i]) == "--progress-thread") level = MPI_THREAD_MULTIPLE;
    MPI_Init_thread(argc, argv, level, &provided);
  }
  ~MpiSession() { MPI_Finalize(); }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
};

std::string join(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

// Ranks must measure the same thing: compare every effective option with rank 0's.
void check_same_options(const Control& ctl, const Options& opt) {
  const nlohmann::json mine = {{"options", opt}, {"argv", join(opt.argv)}};
  std::string blob = mine.dump();
  int len = static_cast<int>(blob.size());
  CB_MPI(MPI_Bcast(&len, 1, MPI_INT, 0, ctl.comm()));
  blob.resize(static_cast<size_t>(len));
  CB_MPI(MPI_Bcast(blob.data(), len, MPI_CHAR, 0, ctl.comm()));
  const nlohmann::json root = nlohmann::json::parse(blob);
  const bool same = root["options"] == mine["options"];
  agree(ctl, same ? kExitOk : kExitUsage,
        "ranks were started with different options: rank " + std::to_string(ctl.rank()) + " got '" +
            join(opt.argv) + "' but rank 0 got '" + root["argv"].get<std::string>() + "'");
}

std::string backend_line(const Backend& be, const BackendDescription& about) {
  std::string line = "# Backend: " + be.name() + " (" + about.library_version + ")";
  if (const char* preload = std::getenv("LD_PRELOAD"); preload && *preload)
    line += std::string(", under LD_PRELOAD=") + preload;
  return line;
}

std::string ranks_line(const Control& ctl) {
  std::string hosts;
  for (const auto& [name, ranks] : ctl.hosts())
    hosts += (hosts.empty() ? "" : ", ") + name + ":" + std::to_string(ranks.size());
  return "# Ranks: " + std::to_string(ctl.size()) + " on " + std::to_string(ctl.node_count()) +
         (ctl.node_count() == 1 ? " host" : " hosts") + " (" + hosts +
         "), wait: " + (ctl.wait_mode() == WaitMode::Yield ? "yield" : "spin");
}

std::string repeat_line(const Options& opt) {
  return "# Repeat: " + std::to_string(opt.repeat) +
         " passes per size (warmup + iterations each); a row is the median pass by its "
         "headline time" +
         (opt.full ? "; Pass Min/Max(us): the fastest and slowest pass's headline time, "
                     "Spread(%) = (max - min) / median"
                   : "") +
         (opt.validate ? "; -c checks the last pass" : "");
}

// One point: --repeat passes of Runner::measure(), each under the watchdog. With more
// than one pass, the median pass (by pass_us, rank 0's times, so every rank picks the same
// one) is reported, with the spread in the record ("repeat") and, with -f, in the table.
// before_pass(k) runs before pass k (the progress line).
SizeOutcome measure_point(const RunContext& rc, Runner& runner, const Point& point, Watchdog& dog,
                          const std::function<void(int)>& before_pass) {
  const int passes = rc.opt.repeat;
  std::vector<SizeOutcome> outs;
  outs.reserve(static_cast<size_t>(passes));
  for (int k = 0; k < passes; ++k) {
    before_pass(k);
    Point pass = point;
    pass.validate = k == passes - 1;  // -c: data checked once, after the last pass
    dog.arm("message size " + std::to_string(point.bytes) + " B" +
            (point.algo.empty() ? "" : " (algorithm " + point.algo + ")") +
            (passes > 1 ? " (pass " + std::to_string(k + 1) + " of " + std::to_string(passes) + ")"
                        : "") +
            " on backend " + rc.be.name());
    outs.push_back(runner.measure(pass));
    dog.disarm();
  }
  if (passes == 1) return std::move(outs.front());

  std::vector<double> times;
  long long wrong = 0;
  for (const SizeOutcome& o : outs) {
    times.push_back(o.pass_us);
    wrong += o.wrong;
  }
  // Rank 0's times on every rank (a MAX that only rank 0 feeds; it honours the wait mode).
  if (!rc.ctl.is_root()) times.assign(times.size(), std::numeric_limits<double>::lowest());
  times = rc.ctl.max(times);
  const PassSummary s = summarize_passes(times);
  RankAgreement agreement = outs.back().agreement;  // the validated pass's
  SizeOutcome out = std::move(outs[s.reported]);
  out.wrong = wrong;
  out.agreement = std::move(agreement);
  out.record["repeat"] = {{"passes", passes},      {"figure", out.pass_figure},
                          {"pass_us", times},      {"reported_pass", s.reported},
                          {"median_us", s.median}, {"min_us", s.min},
                          {"max_us", s.max},       {"spread_pct", s.spread_pct}};
  if (rc.opt.full) {
    out.cells.push_back({"Pass Min(us)", s.min});
    out.cells.push_back({"Pass Max(us)", s.max});
    out.cells.push_back({"Spread(%)", s.spread_pct});
  }
  return out;
}

int sweep(const RunContext& rc, Runner& runner, Table& table, Report& report, Watchdog& dog) {
  long long failed_sizes = 0;
  const std::vector<Point> points = runner.points();
  std::vector<double> work;
  for (const Point& point : points) work.push_back(point_work(rc.opt, point.bytes));
  Progress progress(Progress::wanted(rc.ctl.is_root(), rc.opt), std::move(work), rc.opt.repeat);
  for (size_t i = 0; i < points.size(); ++i) {
    const Point& point = points[i];
    const size_t bytes = point.bytes;
    std::string what = runner.show_size() ? progress_bytes(bytes) : std::string(rc.desc.name);
    if (!point.algo.empty()) what += " " + point.algo;
    SizeOutcome out =
        measure_point(rc, runner, point, dog, [&](int pass) { progress.show(i, pass, what); });
    progress.clear();  // the row below may go to the same terminal
    const RankAgreement& agree = out.agreement;
    const bool failed = out.wrong || agree.failed();
    if (rc.opt.validate) {
      out.cells.push_back({"Validation", 0, 0, failed ? "Fail" : "Pass"});
      nlohmann::json& v = out.record["validation"];
      v = {{"enabled", true},
           {"wrong_elements", out.wrong},
           {"passed", !failed},
           {"bits_compared", agree.compared},
           {"order_check", agree.order_ran}};
      if (agree.compared) v["differing_ranks"] = agree.differ;
      if (agree.order_ran) v["order_differing_ranks"] = agree.order_differ;
    } else {
      out.record["validation"] = {{"enabled", false}};
    }
    table.row(bytes, out.cells);
    for (const auto& line : out.extra_lines) table.line(line);
    report.add_result(std::move(out.record));
    if (failed) ++failed_sizes;
    if (out.wrong && rc.ctl.is_root())
      std::fprintf(stderr,
                   "collbench: DATA VALIDATION ERROR: %lld wrong elements at message size %zu\n",
                   out.wrong, bytes);
    const auto differ = [&](const std::vector<int>& ranks, const char* inputs) {
      if (ranks.empty() || !rc.ctl.is_root()) return;
      std::fprintf(stderr,
                   "collbench: DATA VALIDATION ERROR: result bits differ across ranks at message "
                   "size %zu (%s): rank%s %s differ%s from rank 0\n",
                   bytes, inputs, ranks.size() > 1 ? "s" : "", rank_list(ranks).c_str(),
                   ranks.size() > 1 ? "" : "s");
    };
    differ(agree.differ, "exact inputs");
    differ(agree.order_differ, "order-sensitive inputs");
  }
  return failed_sizes ? kExitValidationFailed : kExitOk;
}

}  // namespace

int bench_main(const BenchDesc& desc, int argc, char** argv) {
  MpiSession mpi(&argc, &argv, desc.thread_multiple);
  std::unique_ptr<Report> report;
  int status = kExitOk;
  int rank = 0;
  try {
    Control ctl;
    rank = ctl.rank();
    install_interrupt_handlers(rank);  // SIGINT/SIGTERM/SIGHUP: JSON marked interrupted
    Options opt;
    std::optional<std::string> early;
    agreed(ctl, [&] {
      ParseOutcome parsed = parse_options(desc, argc, argv);
      opt = std::move(parsed.options);
      early = std::move(parsed.early_exit);
    });
    if (ctl.max(early ? 1.0 : 0.0) > 0) {  // --help / --version
      if (ctl.is_root() && early) std::printf("%s", early->c_str());
      return kExitOk;
    }
    check_same_options(ctl, opt);

    const bool crowded = ctl.max_ranks_per_node() > cores_on_node();
    ctl.set_wait_mode(opt.wait == WaitSetting::Yield || (opt.wait == WaitSetting::Auto && crowded)
                          ? WaitMode::Yield
                          : WaitMode::Spin);

    std::unique_ptr<Backend> be;
    agreed(ctl, [&] {
      check_cuda_graph_device(opt);  // -G without a GPU: said naming -G, before -d cuda does
      if (opt.mem == Mem::Cuda) gpu::select_device(ctl.local_rank());
      be = make_backend(backend_config(opt), ctl);
    });
    // -T with several types: one runner, and one sweep, per type (OMB's -T all).
    std::vector<Options> per_type;
    for (Dtype d : opt.dtypes) {
      per_type.push_back(opt);
      per_type.back().dtype = d;
    }
    const RunContext rc{desc, per_type.front(), ctl, *be};
    std::unique_ptr<Runner> runner = desc.make_runner(rc);
    agreed(ctl, [&] { runner->prepare(); });

    nlohmann::json doc;
    doc["benchmark"] = {
        {"name", desc.name}, {"title", desc.title}, {"executable", "cb_" + std::string(desc.name)}};
    const BackendDescription about = be->description();
    doc["backend"] = about.facts;
    doc["backend"]["name"] = be->name();
    doc["backend"]["library"] = about.library_version;
    doc["argv"] = opt.argv;
    doc["options"] = opt;
    describe_environment(ctl, doc["environment"]);
    runner->annotate(doc);
    agreed(ctl, [&] { report = std::make_unique<Report>(ctl.is_root(), opt.json_path, doc); });

    Table table(ctl.is_root());
    table.set_show_size(runner->show_size());
    table.line("# collbench " + about.title + " " + std::string(desc.title) + " v" + CB_VERSION);
    table.line(backend_line(*be, about));
    table.line(ranks_line(ctl));
    const std::vector<std::string> first_lines = runner->header_lines();
    for (const auto& line : first_lines) table.line(line);
    if (opt.repeat > 1) table.line(repeat_line(opt));

    Watchdog dog(opt.time_limit_s, [&](const std::string& what) {
      // Give rank 0 a head start so that it marks the JSON before the launcher kills it.
      if (!ctl.is_root()) std::this_thread::sleep_for(std::chrono::seconds(2));
      std::fprintf(stderr, "collbench: rank %d: time limit of %g s exceeded at %s; aborting\n",
                   ctl.rank(), opt.time_limit_s, what.c_str());
      std::fflush(stderr);
      if (report) {
        try {
          report->finish("aborted", "time limit exceeded at " + what);
        } catch (...) {
        }
      }
      rc.be.abort();  // after the report: NCCL's abort must not delay marking the JSON
      // End the whole job with this status: left to the launcher, the status of a rank it
      // had to kill could win. (MPI_Abort from this thread: the process ends here anyway.)
      MPI_Abort(MPI_COMM_WORLD, kExitTimeLimit);
    });
    status = sweep(rc, *runner, table, *report, dog);
    runner.reset();
    for (size_t k = 1; k < per_type.size(); ++k) {
      const RunContext next{desc, per_type[k], ctl, *be};
      runner = desc.make_runner(next);
      agreed(ctl, [&] { runner->prepare(); });
      // The header lines that differ from the first type's (its datatype, its notes).
      table.line("");
      for (const auto& line : runner->header_lines())
        if (std::find(first_lines.begin(), first_lines.end(), line) == first_lines.end())
          table.line(line);
      table.new_section();
      status = std::max(status, sweep(next, *runner, table, *report, dog));
      runner.reset();
    }
    report->finish(status == kExitOk ? "complete" : "validation_failed");
  } catch (const ExitRequest& e) {
    status = e.status;
  } catch (const std::exception& e) {
    // Mid-run failure: other ranks may be blocked in communication, so abort them all.
    std::fprintf(stderr, "collbench: error (rank %d): %s\n", rank, e.what());
    std::fflush(stderr);
    // A rank died: every rank waiting for it finds out alike. Give rank 0 a head start
    // so that it records the error in the JSON before another rank's abort ends it.
    if (rank != 0 && dynamic_cast<const PeerExited*>(&e))
      std::this_thread::sleep_for(std::chrono::seconds(1));
    if (report) {
      try {
        report->finish("error", e.what());
      } catch (...) {
      }
    }
    MPI_Abort(MPI_COMM_WORLD, kExitRuntime);
  }
  return status;
}

}  // namespace cb
