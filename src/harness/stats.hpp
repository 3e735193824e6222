// Summaries of timing samples: OMB's average plus the distribution OMB does not keep.
#pragma once

#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace cb {

struct Summary {
  size_t n = 0;
  double avg = 0, min = 0, max = 0, stddev = 0;
  double p50 = 0, p90 = 0, p99 = 0;
  std::vector<std::pair<double, double>> tails;  // (percentile, value) requested with -z
};

// Nearest-rank percentile of sorted samples: the smallest value with at least p% of the
// samples at or below it (p in (0, 100]).
double percentile(std::span<const double> sorted, double p);

// Summary of samples; `tail_percentiles` adds the -z figures. Empty input gives zeros.
Summary summarize(std::vector<double> samples, std::span<const double> tail_percentiles = {});

// {"avg":..,"min":..,"max":..,"p50":..,"p90":..,"p99":..,"stddev":..,"n":..,"tails":{"p95":..}}
void to_json(nlohmann::json& j, const Summary& s);

// "p99.9" style key for a percentile.
std::string percentile_key(double p);

// --repeat N: the headline time of each pass of one message size (run order), and which
// pass is reported. The reported pass is the median one: for even N the lower of the two
// middle passes (a pass that ran), while `median` is the mean of the two middle values.
// Equal times keep run order. spread_pct = 100 x (max - min) / median (0 if median is 0).
struct PassSummary {
  size_t passes = 0;
  size_t reported = 0;  // index into the pass list
  double median = 0, min = 0, max = 0, spread_pct = 0;
};

PassSummary summarize_passes(std::span<const double> pass_times);

// Tukey's fences over pass times: the indices of the passes below Q1 - 1.5 IQR or above
// Q3 + 1.5 IQR (quartiles by linear interpolation). Flagged and counted, never dropped:
// a pass that outlies is a fact about the machine, and the median already resists it.
std::vector<size_t> tukey_outliers(std::span<const double> times);

// A distribution-free 95 % confidence interval for the median of independent samples
// (the sign test's, from order statistics: [x_(j), x_(n+1-j)] with the largest j such that
// 2 P(Binomial(n, 1/2) <= j - 1) <= 0.05; Hoefler & Belli, SC'15). `confidence` is the
// interval's exact coverage (>= 0.95). Fewer than 6 samples cannot give 95 %: defined false.
struct MedianInterval {
  bool defined = false;
  double median = 0, lo = 0, hi = 0, confidence = 0;
};
MedianInterval median_interval(std::vector<double> samples);

// Interleaved series (--backend a,b / --algo a,b / --alloc a,b): a series against the
// baseline from their paired passes (pass k of both ran in the same round, in shuffled
// order, so drift falls on both alike). `ratios` are series time / baseline time per
// pass; the verdict reads the median ratio's interval: "faster" when it lies below 1,
// "slower" above 1, "indistinguishable" when it holds 1, "too few passes" under 6 pairs.
struct Comparison {
  std::vector<double> ratios;
  MedianInterval ratio;
  std::string verdict;
};
Comparison compare_paired(std::span<const double> series_us, std::span<const double> baseline_us);

}  // namespace cb
