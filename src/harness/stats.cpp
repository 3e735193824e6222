#include "harness/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>

#include <nlohmann/json.hpp>

namespace cb {

double percentile(std::span<const double> sorted, double p) {
  if (sorted.empty()) return 0.0;
  const double rank = std::ceil(p / 100.0 * static_cast<double>(sorted.size()));
  const size_t index = rank < 1.0 ? 0 : static_cast<size_t>(rank) - 1;
  return sorted[std::min(index, sorted.size() - 1)];
}

Summary summarize(std::vector<double> samples, std::span<const double> tail_percentiles) {
  Summary s;
  s.n = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const double n = static_cast<double>(s.n);
  s.avg = std::accumulate(samples.begin(), samples.end(), 0.0) / n;
  s.min = samples.front();
  s.max = samples.back();
  double sq = 0.0;
  for (double x : samples) sq += (x - s.avg) * (x - s.avg);
  s.stddev = s.n > 1 ? std::sqrt(sq / (n - 1.0)) : 0.0;  // sample standard deviation
  s.p50 = percentile(samples, 50);
  s.p90 = percentile(samples, 90);
  s.p99 = percentile(samples, 99);
  for (double p : tail_percentiles) s.tails.emplace_back(p, percentile(samples, p));
  return s;
}

PassSummary summarize_passes(std::span<const double> pass_times) {
  PassSummary s;
  s.passes = pass_times.size();
  if (pass_times.empty()) return s;
  std::vector<size_t> order(pass_times.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return pass_times[a] < pass_times[b]; });
  const size_t n = order.size();
  s.reported = order[(n - 1) / 2];
  s.median = n % 2 ? pass_times[order[n / 2]]
                   : (pass_times[order[n / 2 - 1]] + pass_times[order[n / 2]]) / 2.0;
  s.min = pass_times[order.front()];
  s.max = pass_times[order.back()];
  s.spread_pct = s.median > 0 ? 100.0 * (s.max - s.min) / s.median : 0.0;
  return s;
}

std::string percentile_key(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "p%g", p);
  return buf;
}

void to_json(nlohmann::json& j, const Summary& s) {
  j = {{"avg", s.avg}, {"min", s.min}, {"max", s.max},       {"p50", s.p50},
       {"p90", s.p90}, {"p99", s.p99}, {"stddev", s.stddev}, {"n", s.n}};
  if (!s.tails.empty()) {
    nlohmann::json tails = nlohmann::json::object();
    for (const auto& [p, v] : s.tails) tails[percentile_key(p)] = v;
    j["tails"] = tails;
  }
}

}  // namespace cb
