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
#include "core/errors.hpp"
#include "core/mpi_check.hpp"
#include "core/verify.hpp"
#include "gpu/device.hpp"
#include "harness/environment.hpp"
#include "harness/interrupt.hpp"
#include "harness/progress.hpp"
#include "harness/runner.hpp"
#include "harness/stats.hpp"
#include "harness/sweep.hpp"
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

// ", bound: rank 0 to CPU 0, rank 1 to CPU 1" (or ", not bound"): how the launcher placed
// the ranks, from the environment's binding.
std::string binding_text(const nlohmann::json& binding) {
  if (!binding.value("bound", false)) return ", not bound to CPUs";
  std::string text = ", bound:";
  const auto& cpus = binding["cpus_per_rank"];
  for (size_t r = 0; r < cpus.size() && r < 8; ++r)
    text +=
        (r ? ", rank " : " rank ") + std::to_string(r) + " to CPU " + cpus[r].get<std::string>();
  if (cpus.size() > 8) text += ", ...";
  return text;
}

std::string ranks_line(const Control& ctl) {
  std::string hosts;
  for (const auto& [name, ranks] : ctl.hosts())
    hosts += (hosts.empty() ? "" : ", ") + name + ":" + std::to_string(ranks.size());
  return "# Ranks: " + std::to_string(ctl.size()) + " on " + std::to_string(ctl.node_count()) +
         (ctl.node_count() == 1 ? " host" : " hosts") + " (" + hosts +
         "), wait: " + (ctl.wait_mode() == WaitMode::Yield ? "yield" : "spin");
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

    // One series, or one per combination of --backend/--algo/--alloc lists (sweep.hpp).
    std::vector<std::unique_ptr<SeriesRun>> runs;
    std::vector<Options::Series> series = opt.series;
    if (series.empty()) series.push_back({"", opt.backend, opt.algo, opt.plain_alloc});
    // -T with several types: one runner, and one sweep, per type (OMB's -T all).
    std::vector<Options> per_type;
    for (Dtype d : opt.dtypes) {
      per_type.push_back(opt);
      per_type.back().dtype = d;
    }
    for (const Options::Series& one : series) {
      auto run = std::make_unique<SeriesRun>();
      run->name = one.name;
      run->opt = per_type.front();
      run->opt.backend = one.backend;
      run->opt.algo = one.algo;
      run->opt.plain_alloc = one.plain_alloc;
      agreed(ctl, [&] {
        check_cuda_graph_device(run->opt);  // -G without a GPU: said naming -G, before -d cuda
        if (run->opt.mem == Mem::Cuda) gpu::select_device(ctl.local_rank());
        run->be = make_backend(backend_config(run->opt), ctl);
      });
      run->rc = std::make_unique<RunContext>(RunContext{desc, run->opt, ctl, *run->be});
      run->runner = desc.make_runner(*run->rc);
      agreed(ctl, [&] {
        if (const std::string given = placement_options_given(run->opt);
            !given.empty() && !run->runner->places_buffers())
          throw UsageError(given + ": cb_" + std::string(desc.name) +
                           " does not take them (the collectives and cb_latency, cb_bw, cb_bibw, "
                           "cb_mbw_mr and cb_multi_lat do)");
        run->runner->prepare();
      });
      runs.push_back(std::move(run));
    }
    const RunContext& rc = *runs.front()->rc;
    Backend& be = *runs.front()->be;
    std::unique_ptr<Runner>& runner = runs.front()->runner;

    nlohmann::json doc;
    doc["benchmark"] = {
        {"name", desc.name}, {"title", desc.title}, {"executable", "cb_" + std::string(desc.name)}};
    const BackendDescription about = be.description();
    doc["backend"] = about.facts;
    doc["backend"]["name"] = be.name();
    doc["backend"]["library"] = about.library_version;
    if (!opt.series.empty()) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& r : runs)
        list.push_back({{"name", r->name},
                        {"backend", r->be->name()},
                        {"library", r->be->description().library_version},
                        {"algo", r->opt.algo},
                        {"alloc", r->opt.plain_alloc ? "plain" : "backend"}});
      doc["interleave"] = {{"series", list},
                           {"baseline", runs.front()->name},
                           {"passes", opt.repeat},
                           {"seed", opt.seed},
                           {"order", "shuffled per pass"},
                           {"interval", "sign test on order statistics, 95 %"}};
    }
    doc["argv"] = opt.argv;
    doc["options"] = opt;
    describe_environment(ctl, doc["environment"]);
    runner->annotate(doc);
    agreed(ctl, [&] { report = std::make_unique<Report>(ctl.is_root(), opt.json_path, doc); });

    Table table(ctl.is_root());
    table.set_show_size(runner->show_size());
    table.line("# collbench " + about.title + " " + std::string(desc.title) + " v" + CB_VERSION);
    for (const auto& r : runs) {
      const std::string line = backend_line(*r->be, r->be->description());
      table.line(r->name.empty() ? line : line + " [series " + r->name + "]");
    }
    table.line(ranks_line(ctl) + binding_text(doc["environment"]["binding"]));
    const std::vector<std::string> first_lines = runner->header_lines();
    for (const auto& line : first_lines) table.line(line);
    if (!opt.series.empty())
      table.line(interleave_line(runs));
    else if (opt.repeat > 1 || opt.target_ci_pct > 0)
      table.line(repeat_line(opt));

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
      // After the report: NCCL's abort must not delay marking the JSON.
      for (const auto& r : runs) r->be->abort();
      // End the whole job with this status: left to the launcher, the status of a rank it
      // had to kill could win. (MPI_Abort from this thread: the process ends here anyway.)
      MPI_Abort(MPI_COMM_WORLD, kExitTimeLimit);
    });
    if (!opt.series.empty()) {
      status = sweep_series(runs, table, *report, dog);
    } else {
      status = sweep(rc, *runner, table, *report, dog);
      runner.reset();
      for (size_t k = 1; k < per_type.size(); ++k) {
        const RunContext next{desc, per_type[k], ctl, be};
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
    }
    for (auto& r : runs) r->runner.reset();  // before the backends
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
