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

}  // namespace cb
