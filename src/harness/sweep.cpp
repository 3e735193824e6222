#include "harness/sweep.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <numeric>
#include <random>

#include "core/errors.hpp"
#include "core/verify.hpp"
#include "harness/progress.hpp"
#include "harness/stats.hpp"
#include "harness/timer.hpp"

#include <nlohmann/json.hpp>

namespace cb {
namespace {

// What the watchdog names when a pass overruns.
std::string pass_label(const RunContext& rc, const Point& point, int k, int passes) {
  const std::string of = rc.opt.target_ci_pct > 0 ? "" : " of " + std::to_string(passes);
  return "message size " + std::to_string(point.bytes) + " B" +
         (point.algo.empty() ? "" : " (algorithm " + point.algo + ")") +
         (passes > 1 ? " (pass " + std::to_string(k + 1) + of + ")" : "") + " on backend " +
         rc.be.name();
}

// Rank 0's value on every rank (a MAX that only rank 0 feeds; it honours the wait mode).
double rank0(const Control& ctl, double v) {
  return ctl.max(ctl.is_root() ? v : std::numeric_limits<double>::lowest());
}

// --target-ci: whether another pass is wanted, from rank 0's times of each series so far
// (so every rank decides alike). Sets `stopped_by` when not.
struct TargetCi {
  double target_pct = 0, cap_s = 0;
  int min_passes = 1;
  double start_s = 0;
  std::string stopped_by;

  // The interval's half-width as a percentage of the median (infinite while undefined).
  static double half_width_pct(const std::vector<double>& times) {
    const MedianInterval m = median_interval(times);
    if (!m.defined || m.median <= 0) return std::numeric_limits<double>::infinity();
    return 100.0 * (m.hi - m.lo) / 2.0 / m.median;
  }
  bool more(const Control& ctl, const std::vector<std::vector<double>>& times) {
    const int done = static_cast<int>(times.front().size());
    if (done < min_passes) return true;
    bool met = true;
    for (const auto& t : times) met = met && half_width_pct(t) <= target_pct;
    if (met) {
      stopped_by = "target";
      return false;
    }
    if (rank0(ctl, now_s() - start_s) >= cap_s) {
      stopped_by = "time cap";
      return false;
    }
    if (done >= kMaxRepeat) {
      stopped_by = "pass cap";
      return false;
    }
    return true;
  }
  nlohmann::json record(const std::vector<double>& times) const {
    const double achieved = half_width_pct(times);
    return {{"target_pct", target_pct},
            {"achieved_pct", std::isfinite(achieved) ? nlohmann::json(achieved) : nullptr},
            {"stopped_by", stopped_by},
            {"cap_s", cap_s}};
  }
};

TargetCi target_ci(const Options& o) {
  TargetCi t;
  t.target_pct = o.target_ci_pct;
  t.cap_s = o.target_ci_cap_s;
  t.min_passes = o.repeat;
  t.start_s = now_s();
  return t;
}

nlohmann::json interval_json(const MedianInterval& m) {
  if (!m.defined) return nullptr;
  return nlohmann::json::array({m.lo, m.hi});
}

// The passes of one point as one outcome: with several, the median pass (by pass_us, rank
// 0's times, so every rank picks the same one) with the spread in the record ("repeat")
// and, with -f, in the table; the validated pass's agreement and every pass's wrong
// elements.
SizeOutcome combine_passes(const RunContext& rc, std::vector<SizeOutcome> outs, size_t validated) {
  const size_t passes = outs.size();
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
  RankAgreement agreement = outs[validated].agreement;
  SizeOutcome out = std::move(outs[s.reported]);
  out.wrong = wrong;
  out.agreement = std::move(agreement);
  out.record["repeat"] = {{"passes", passes},
                          {"figure", out.pass_figure},
                          {"pass_us", times},
                          {"reported_pass", s.reported},
                          {"median_us", s.median},
                          {"min_us", s.min},
                          {"max_us", s.max},
                          {"spread_pct", s.spread_pct},
                          {"outlier_passes", tukey_outliers(times)}};
  const MedianInterval median = median_interval(times);
  out.record["repeat"]["median_ci95_us"] = interval_json(median);
  out.record["repeat"]["ci_confidence"] =
      median.defined ? nlohmann::json(median.confidence) : nullptr;
  if (rc.opt.full) {
    out.cells.push_back({"Pass Min(us)", s.min});
    out.cells.push_back({"Pass Max(us)", s.max});
    out.cells.push_back({"Spread(%)", s.spread_pct});
  }
  return out;
}

// One point: --repeat passes of Runner::measure(), each under the watchdog. With more
// than one pass, the median pass (by pass_us, rank 0's times, so every rank picks the same
// one) is reported, with the spread in the record ("repeat") and, with -f, in the table.
// before_pass(k) runs before pass k (the progress line).
SizeOutcome measure_point(const RunContext& rc, Runner& runner, const Point& point, Watchdog& dog,
                          const std::function<void(int)>& before_pass) {
  const int passes = rc.opt.repeat;
  const bool adaptive = rc.opt.target_ci_pct > 0;
  TargetCi target = target_ci(rc.opt);
  std::vector<SizeOutcome> outs;
  std::vector<std::vector<double>> times(1);
  for (int k = 0; adaptive ? target.more(rc.ctl, times) : k < passes; ++k) {
    before_pass(k);
    Point pass = point;
    // -c: data checked once, after the last pass (--target-ci: the first, as the last is
    // not known in advance)
    pass.validate = adaptive ? k == 0 : k == passes - 1;
    dog.arm(pass_label(rc, point, k, passes));
    outs.push_back(runner.measure(pass));
    dog.disarm();
    if (adaptive) times.front().push_back(rank0(rc.ctl, outs.back().pass_us));
  }
  SizeOutcome out = combine_passes(rc, std::move(outs), adaptive ? 0 : passes - 1);
  if (adaptive) {
    out.record["repeat"]["target_ci"] = target.record(times.front());
    const double achieved = TargetCi::half_width_pct(times.front());
    out.cells.push_back(
        {"CI(+-%)", std::isfinite(achieved) ? achieved : 0, 1, std::isfinite(achieved) ? "" : "-"});
  }
  return out;
}

// A measured point into the table and the JSON, with -c's verdict and its messages;
// true when its validation failed.
bool record_point(const RunContext& rc, SizeOutcome& out, size_t bytes, Table& table,
                  Report& report) {
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
  return failed;
}

std::string interval_text(const MedianInterval& m, int decimals) {
  if (!m.defined) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "[%.*f, %.*f]", decimals, m.lo, decimals, m.hi);
  return buf;
}

// Rows of different series may carry different cells (the engine's Algorithm column):
// every row gets `headers` in order, "-" where its series has no such cell.
std::vector<Cell> aligned(const std::vector<std::string>& headers, const std::vector<Cell>& cells) {
  std::vector<Cell> out;
  for (const std::string& h : headers) {
    const auto it =
        std::find_if(cells.begin(), cells.end(), [&](const Cell& c) { return c.header == h; });
    out.push_back(it != cells.end() ? *it : Cell{h, 0, 0, "-"});
  }
  return out;
}

}  // namespace

// How many passes: a fixed number, or --target-ci's rule.
std::string passes_text(const Options& opt) {
  if (opt.target_ci_pct <= 0) return std::to_string(opt.repeat) + " passes per size";
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "at least %d passes per size, until the median's 95 %% interval is within "
                "+-%g %% of it (CI(+-%%): the half-width reached) or %g s at the size",
                opt.repeat, opt.target_ci_pct, opt.target_ci_cap_s);
  return buf;
}

std::string repeat_line(const Options& opt) {
  return "# Repeat: " + passes_text(opt) +
         " (warmup + iterations each); a row is the median pass by its headline time" +
         (opt.full ? "; Pass Min/Max(us): the fastest and slowest pass's headline time, "
                     "Spread(%) = (max - min) / median"
                   : "") +
         (opt.validate
              ? opt.target_ci_pct > 0 ? "; -c checks the first pass" : "; -c checks the last pass"
              : "");
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
    if (record_point(rc, out, bytes, table, report)) ++failed_sizes;
  }
  return failed_sizes ? kExitValidationFailed : kExitOk;
}

std::string interleave_line(const std::vector<std::unique_ptr<SeriesRun>>& runs) {
  std::string names;
  for (const auto& r : runs) names += (names.empty() ? "" : ", ") + r->name;
  const Options& o = runs.front()->opt;
  return "# Interleaved: " + std::to_string(runs.size()) + " series (" + names + "), " +
         passes_text(o) + ", each pass running every series once in " +
         "an order shuffled per pass (seed " + std::to_string(o.seed) + "). A row is its series' " +
         "median pass; Median CI: the median's 95 % interval (sign test); Ratio: the median of " +
         "the per-pass time ratios to " + runs.front()->name + ", with its 95 % interval; " +
         "Verdict: faster/slower where that interval excludes 1, else indistinguishable";
}

int sweep_series(const std::vector<std::unique_ptr<SeriesRun>>& runs, Table& table, Report& report,
                 Watchdog& dog) {
  const size_t n = runs.size();
  const RunContext& first = *runs.front()->rc;
  std::vector<std::vector<Point>> points;
  for (const auto& r : runs) {
    points.push_back(r->runner->points());
    std::vector<size_t> mine, base;
    for (const Point& p : points.back()) mine.push_back(p.bytes);
    for (const Point& p : points.front()) base.push_back(p.bytes);
    if (mine != base)
      throw UsageError("series " + r->name + " measures other sizes than " + runs.front()->name +
                       " (" + std::to_string(mine.size()) + " against " +
                       std::to_string(base.size()) + "): interleaved series need the same sizes");
  }
  const int passes = first.opt.repeat;
  std::vector<double> work;
  for (const Point& point : points.front())
    work.push_back(point_work(first.opt, point.bytes) * static_cast<double>(n));
  Progress progress(Progress::wanted(first.ctl.is_root(), first.opt), std::move(work), passes);
  std::mt19937_64 shuffle(
      static_cast<uint64_t>(first.opt.seed));  // the same sequence on every rank
  std::vector<std::string> headers;
  long long failed_sizes = 0;

  for (size_t i = 0; i < points.front().size(); ++i) {
    const size_t bytes = points.front()[i].bytes;
    std::vector<std::vector<SizeOutcome>> outs(n);
    std::vector<std::vector<size_t>> positions(n);  // each series' place in each pass
    std::vector<size_t> order(n);
    const bool adaptive = first.opt.target_ci_pct > 0;
    TargetCi target = target_ci(first.opt);
    std::vector<std::vector<double>> so_far(n);  // rank 0's pass times, for --target-ci
    for (int k = 0; adaptive ? target.more(first.ctl, so_far) : k < passes; ++k) {
      std::iota(order.begin(), order.end(), size_t{0});
      std::shuffle(order.begin(), order.end(), shuffle);
      progress.show(i, k, runs[0]->runner->show_size() ? progress_bytes(bytes) : runs[0]->name);
      for (size_t place = 0; place < n; ++place) positions[order[place]].push_back(place);
      for (size_t s : order) {
        Point pass = points[s][i];
        pass.validate = adaptive ? k == 0 : k == passes - 1;
        dog.arm(pass_label(*runs[s]->rc, pass, k, passes) + " (series " + runs[s]->name + ")");
        outs[s].push_back(runs[s]->runner->measure(pass));
        dog.disarm();
        if (adaptive) so_far[s].push_back(rank0(first.ctl, outs[s].back().pass_us));
      }
    }
    progress.clear();

    std::vector<SizeOutcome> rows;
    std::vector<std::vector<double>> times(n);
    for (size_t s = 0; s < n; ++s) {
      const size_t validated = adaptive ? 0 : outs[s].size() - 1;
      rows.push_back(combine_passes(*runs[s]->rc, std::move(outs[s]), validated));
      if (adaptive) rows.back().record["repeat"]["target_ci"] = target.record(so_far[s]);
      times[s] = rows.back().record["repeat"]["pass_us"].get<std::vector<double>>();
    }
    for (size_t s = 0; s < n; ++s) {
      SizeOutcome& out = rows[s];
      const MedianInterval median = median_interval(times[s]);
      out.record["repeat"]["positions"] = positions[s];
      out.record["series"] = runs[s]->name;
      out.cells.push_back({"Series", 0, 0, runs[s]->name});
      out.cells.push_back({"Median CI(us)", 0, 0, interval_text(median, 2)});
      if (s == 0) {
        out.cells.push_back({"Ratio", 1, 3});
        out.cells.push_back({"Ratio CI", 0, 0, "-"});
        out.cells.push_back({"Verdict", 0, 0, "baseline"});
      } else {
        const Comparison c = compare_paired(times[s], times[0]);
        out.record["versus"] = {
            {"baseline", runs[0]->name},
            {"ratio", c.ratio.median},
            {"ratio_ci95", interval_json(c.ratio)},
            {"confidence", c.ratio.defined ? nlohmann::json(c.ratio.confidence) : nullptr},
            {"verdict", c.verdict},
            {"pass_ratios", c.ratios}};
        out.cells.push_back({"Ratio", c.ratio.median, 3});
        out.cells.push_back({"Ratio CI", 0, 0, interval_text(c.ratio, 3)});
        out.cells.push_back({"Verdict", 0, 0, c.verdict});
      }
      if (headers.empty() || i == 0)
        for (const Cell& c : out.cells)
          if (std::find(headers.begin(), headers.end(), c.header) == headers.end())
            headers.push_back(c.header);
    }
    for (size_t s = 0; s < n; ++s) {
      rows[s].cells = aligned(headers, rows[s].cells);
      if (record_point(*runs[s]->rc, rows[s], bytes, table, report)) ++failed_sizes;
    }
  }
  return failed_sizes ? kExitValidationFailed : kExitOk;
}

}  // namespace cb
