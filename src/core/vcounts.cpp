#include "core/vcounts.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "core/errors.hpp"

namespace cb {
namespace {

uint64_t splitmix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

[[noreturn]] void bad(std::string_view text, const std::string& why) {
  throw UsageError("--counts: invalid value '" + std::string(text) + "' (" + why +
                   "; expected uniform, zipf:S[,SEED] or random[:SEED])");
}

uint64_t parse_seed(std::string_view text, std::string_view s) {
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size())
    bad(text, "the seed must be a non-negative integer");
  return v;
}

// `total` split by `weights` (not all zero), rounded by largest remainder so that the
// parts add up to total exactly; ties go to the lower index.
std::vector<size_t> apportion(size_t total, const std::vector<double>& weights) {
  const double sum = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<size_t> parts(weights.size());
  std::vector<std::pair<double, size_t>> rest(weights.size());
  size_t given = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    const double exact = static_cast<double>(total) * weights[i] / sum;
    parts[i] = std::min(total, static_cast<size_t>(std::floor(exact)));
    given += parts[i];
    rest[i] = {exact - static_cast<double>(parts[i]), i};
  }
  std::stable_sort(rest.begin(), rest.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t k = 0; given < total; k = (k + 1) % rest.size(), ++given) ++parts[rest[k].second];
  while (given > total) {  // floating error the other way (not expected): take it back
    auto it = std::max_element(parts.begin(), parts.end());
    --*it;
    --given;
  }
  return parts;
}

}  // namespace

double seeded_unit(uint64_t seed, uint64_t a, uint64_t b) {
  return static_cast<double>(splitmix(splitmix(seed * 0x100000001B3ull + a) + b) >> 11) * 0x1p-53;
}

std::string CountsPattern::str() const {
  switch (kind) {
    case Kind::Uniform:
      return "uniform";
    case Kind::Zipf: {
      char buf[64];
      std::snprintf(buf, sizeof buf, "zipf:%g,%llu", skew, static_cast<unsigned long long>(seed));
      return buf;
    }
    case Kind::Random:
      return "random:" + std::to_string(seed);
  }
  return "?";
}

CountsPattern parse_counts_pattern(std::string_view text) {
  CountsPattern p;
  const size_t colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  const std::string_view arg = colon == std::string_view::npos ? "" : text.substr(colon + 1);
  if (name == "uniform") {
    if (colon != std::string_view::npos) bad(text, "uniform takes no parameter");
    return p;
  }
  if (name == "random") {
    p.kind = CountsPattern::Kind::Random;
    if (colon != std::string_view::npos) p.seed = parse_seed(text, arg);
    return p;
  }
  if (name != "zipf") bad(text, "unknown pattern");
  p.kind = CountsPattern::Kind::Zipf;
  const size_t comma = arg.find(',');
  const std::string s(arg.substr(0, comma));
  if (s.empty()) bad(text, "zipf needs its exponent S");
  size_t used = 0;
  try {
    p.skew = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != s.size() || !(p.skew >= 0 && p.skew <= 100))
    bad(text, "the Zipf exponent S must be a number from 0 to 100");
  if (comma != std::string_view::npos) p.seed = parse_seed(text, arg.substr(comma + 1));
  return p;
}

CountMatrix::CountMatrix(const CountsPattern& pattern, size_t mean, int nranks)
    : pattern_(pattern), n_(nranks), mean_(mean) {
  const auto n = static_cast<size_t>(nranks);
  counts_.assign(n * n, mean);
  const size_t row = mean * n;
  if (pattern.kind == CountsPattern::Kind::Zipf && n > 1) {
    // Popularity ranks: a permutation of the receivers drawn from the seed (Fisher-Yates).
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), size_t{0});
    for (size_t i = n - 1; i > 0; --i)
      std::swap(order[i],
                order[static_cast<size_t>(seeded_unit(pattern.seed, 0, i) * double(i + 1))]);
    std::vector<double> w(n);
    for (size_t k = 0; k < n; ++k) w[order[k]] = 1.0 / std::pow(double(k + 1), pattern.skew);
    const std::vector<size_t> parts = apportion(row, w);
    for (size_t from = 0; from < n; ++from)
      std::copy(parts.begin(), parts.end(), counts_.begin() + static_cast<ptrdiff_t>(from * n));
  } else if (pattern.kind == CountsPattern::Kind::Random && n > 1) {
    for (size_t from = 0; from < n; ++from) {
      std::vector<double> w(n);
      for (size_t to = 0; to < n; ++to) w[to] = seeded_unit(pattern.seed, from + 1, to);
      if (std::accumulate(w.begin(), w.end(), 0.0) <= 0) w.assign(n, 1.0);
      const std::vector<size_t> parts = apportion(row, w);
      std::copy(parts.begin(), parts.end(), counts_.begin() + static_cast<ptrdiff_t>(from * n));
    }
  }
  index();
}

CountMatrix::CountMatrix(std::vector<size_t> counts, int nranks)
    : n_(nranks), counts_(std::move(counts)) {
  const auto n = static_cast<size_t>(std::max(nranks, 0));
  if (nranks < 1 || counts_.size() != n * n)
    throw std::invalid_argument("a count matrix of " + std::to_string(nranks) + " ranks needs " +
                                std::to_string(n * n) + " counts, not " +
                                std::to_string(counts_.size()));
  pattern_ = {};
  mean_ = std::accumulate(counts_.begin(), counts_.end(), size_t{0}) / (n * n);
  index();
}

CountMatrix CountMatrix::rows_alike(std::vector<size_t> blocks) {
  if (blocks.empty()) throw std::invalid_argument("a count matrix needs at least one rank");
  CountMatrix m;
  m.n_ = static_cast<int>(blocks.size());
  m.rows_alike_ = true;
  m.counts_ = std::move(blocks);
  m.mean_ = std::accumulate(m.counts_.begin(), m.counts_.end(), size_t{0}) / m.counts_.size();
  m.index();
  return m;
}

CountMatrix CountMatrix::transposed() const {
  const auto n = static_cast<size_t>(n_);
  std::vector<size_t> t(n * n);
  for (int a = 0; a < n_; ++a)
    for (int b = 0; b < n_; ++b) t[at(b, a)] = count(a, b);
  CountMatrix m(std::move(t), n_);
  m.pattern_ = pattern_;
  m.mean_ = mean_;
  return m;
}

void CountMatrix::index() {
  const auto n = static_cast<size_t>(n_);
  const int nranks = n_;
  if (rows_alike_) {  // every sender sends the row; rank a receives n blocks of counts_[a]
    send_off_.assign(n, 0);
    recv_off_.clear();
    size_t total = 0;
    for (size_t b = 0; b < n; ++b) {
      send_off_[b] = total;
      total += counts_[b];
    }
    send_tot_.assign(n, total);
    recv_tot_.resize(n);
    for (size_t a = 0; a < n; ++a) recv_tot_[a] = n * counts_[a];
    max_send_ = total;
    max_recv_ = *std::max_element(recv_tot_.begin(), recv_tot_.end());
    return;
  }
  send_off_.assign(n * n, 0);
  recv_off_.assign(n * n, 0);
  send_tot_.assign(n, 0);
  recv_tot_.assign(n, 0);
  for (int a = 0; a < nranks; ++a) {
    for (int b = 0; b < nranks; ++b) {
      send_off_[at(a, b)] = send_tot_[size_t(a)];
      send_tot_[size_t(a)] += count(a, b);
      recv_off_[at(a, b)] = recv_tot_[size_t(a)];  // rank a receiving from b
      recv_tot_[size_t(a)] += count(b, a);
    }
  }
  max_send_ = *std::max_element(send_tot_.begin(), send_tot_.end());
  max_recv_ = *std::max_element(recv_tot_.begin(), recv_tot_.end());
}

double CountMatrix::imbalance() const {
  const double avg =
      static_cast<double>(std::accumulate(recv_tot_.begin(), recv_tot_.end(), size_t{0})) / n_;
  return avg > 0 ? static_cast<double>(max_recv_) / avg : 1.0;
}

size_t CountMatrix::max_block() const {
  size_t most = 0;
  for (int i = 0; i < n_; ++i) most = std::max(most, block(i));
  return most;
}

double CountMatrix::block_imbalance() const {
  const double avg = static_cast<double>(blocks_total()) / n_;
  return avg > 0 ? static_cast<double>(max_block()) / avg : 1.0;
}

}  // namespace cb
