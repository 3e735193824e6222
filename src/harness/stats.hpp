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

}  // namespace cb
