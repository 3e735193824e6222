#include "core/topology.hpp"

#include <algorithm>
#include <charconv>
#include <numeric>

#include "core/errors.hpp"

namespace cb {
namespace {

[[noreturn]] void bad(std::string_view text, const std::string& why) {
  throw UsageError("-N/--topology " + std::string(text) + ": " + why +
                   " (expected cart:DIMS:RADIUS, e.g. cart:2:1)");
}

int number(std::string_view field, std::string_view whole) {
  int v = 0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
  if (ec != std::errc() || end != field.data() + field.size())
    bad(whole, "'" + std::string(field) + "' is not a number");
  return v;
}

}  // namespace

std::string TopologySpec::str() const {
  return "cart:" + std::to_string(dims) + ":" + std::to_string(radius);
}

TopologySpec parse_topology(std::string_view text) {
  if (text.substr(0, 5) != "cart:") bad(text, "only Cartesian topologies (cart:) are built in");
  const std::string_view rest = text.substr(5);
  const size_t colon = rest.find(':');
  TopologySpec t;
  t.dims = number(rest.substr(0, colon), text);
  if (colon != std::string_view::npos) t.radius = number(rest.substr(colon + 1), text);
  if (t.dims < 1 || t.dims > 8) bad(text, "DIMS must be from 1 to 8");
  if (t.radius < 1) bad(text, "RADIUS must be at least 1");
  return t;
}

Topology::Topology(const TopologySpec& spec, std::vector<int> extents)
    : spec_(spec), extents_(std::move(extents)) {
  const int n = std::accumulate(extents_.begin(), extents_.end(), 1, std::multiplies<>());
  out_.resize(size_t(n));
  // Row-major coordinates, as MPI_Cart_create without reordering.
  for (int rank = 0; rank < n; ++rank) {
    std::vector<int>& mine = out_[size_t(rank)];
    int stride = n;
    for (size_t d = 0; d < extents_.size(); ++d) {
      const int extent = extents_[d];
      stride /= extent;
      const int coord = (rank / stride) % extent;
      for (int step = 1; step <= spec_.radius; ++step)
        for (int sign : {-1, +1}) {
          const int c = ((coord + sign * step) % extent + extent) % extent;
          const int peer = rank + (c - coord) * stride;
          if (peer != rank && std::find(mine.begin(), mine.end(), peer) == mine.end())
            mine.push_back(peer);
        }
    }
  }
  in_ = out_;  // symmetric: every step has its opposite
}

size_t Topology::max_degree() const {
  size_t most = 0;
  for (const auto& v : out_) most = std::max(most, v.size());
  return most;
}

double Topology::mean_degree() const {
  size_t all = 0;
  for (const auto& v : out_) all += v.size();
  return out_.empty() ? 0 : static_cast<double>(all) / static_cast<double>(out_.size());
}

}  // namespace cb
