// The timing sweep behind bench_main(): every point of a Runner, every --repeat pass,
// under the watchdog, into the table and the JSON; and the interleaved form, several
// series (backends, algorithms, allocations) measured pass by pass in a shuffled order,
// each against the first (docs/statistics.md).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "harness/options.hpp"
#include "harness/report.hpp"
#include "harness/runner.hpp"
#include "harness/watchdog.hpp"

namespace cb {

// One series of a run: its options (backend, algorithm, allocation), backend and runner.
// A run without series lists has one, named "".
struct SeriesRun {
  std::string name;
  Options opt;
  std::unique_ptr<Backend> be;
  std::unique_ptr<RunContext> rc;
  std::unique_ptr<Runner> runner;
};

std::string repeat_line(const Options& opt);
// "# Interleaved: ..." (how the series are measured and compared).
std::string interleave_line(const std::vector<std::unique_ptr<SeriesRun>>& runs);

// Every point of `runner`, --repeat passes each; returns the exit status (validation).
int sweep(const RunContext& rc, Runner& runner, Table& table, Report& report, Watchdog& dog);

// Several series, point by point: each pass runs every series once, in an order shuffled
// per pass (--seed, the same on every rank); each series' row has its median pass, the
// median's 95 % interval, and against the first series the median of the per-pass ratios,
// its 95 % interval and a verdict (harness/stats.hpp). The series must measure the same
// sizes.
int sweep_series(const std::vector<std::unique_ptr<SeriesRun>>& runs, Table& table, Report& report,
                 Watchdog& dog);

}  // namespace cb
