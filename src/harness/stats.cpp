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

std::vector<size_t> tukey_outliers(std::span<const double> times) {
  std::vector<size_t> out;
  if (times.size() < 4) return out;
  std::vector<double> sorted(times.begin(), times.end());
  std::sort(sorted.begin(), sorted.end());
  const auto quantile = [&](double q) {
    const double pos = q * static_cast<double>(sorted.size() - 1);
    const size_t lo = static_cast<size_t>(pos);
    const size_t hi = std::min(lo + 1, sorted.size() - 1);
    return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
  };
  const double q1 = quantile(0.25), q3 = quantile(0.75), fence = 1.5 * (q3 - q1);
  for (size_t k = 0; k < times.size(); ++k)
    if (times[k] < q1 - fence || times[k] > q3 + fence) out.push_back(k);
  return out;
}

MedianInterval median_interval(std::vector<double> samples) {
  MedianInterval m;
  const size_t n = samples.size();
  if (n == 0) return m;
  std::sort(samples.begin(), samples.end());
  m.median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2.0;
  // P(Binomial(n, 1/2) <= k) for k = 0, 1, ...: the interval [x_(j), x_(n+1-j)] (1-based)
  // misses the median with probability 2 P(X <= j - 1).
  double cdf = 0, term = std::pow(0.5, static_cast<double>(n));  // P(X = 0)
  size_t j = 0;
  for (size_t k = 0; k < n / 2; ++k) {
    cdf += term;
    if (2 * cdf > 0.05) break;
    j = k + 1;
    term *= static_cast<double>(n - k) / static_cast<double>(k + 1);  // P(X = k + 1)
  }
  if (j == 0) return m;
  m.defined = true;
  m.lo = samples[j - 1];
  m.hi = samples[n - j];
  // Coverage: 1 - 2 P(X <= j - 1), recomputed for the j taken.
  double miss = 0, t = std::pow(0.5, static_cast<double>(n));
  for (size_t k = 0; k < j; ++k) {
    miss += t;
    t *= static_cast<double>(n - k) / static_cast<double>(k + 1);
  }
  m.confidence = 1 - 2 * miss;
  return m;
}

Comparison compare_paired(std::span<const double> series_us, std::span<const double> baseline_us) {
  Comparison c;
  for (size_t k = 0; k < std::min(series_us.size(), baseline_us.size()); ++k)
    if (baseline_us[k] > 0) c.ratios.push_back(series_us[k] / baseline_us[k]);
  c.ratio = median_interval(c.ratios);
  if (!c.ratio.defined)
    c.verdict = "too few passes";
  else if (c.ratio.hi < 1)
    c.verdict = "faster";
  else if (c.ratio.lo > 1)
    c.verdict = "slower";
  else
    c.verdict = "indistinguishable";
  return c;
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
