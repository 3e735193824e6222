#include "core/topology.hpp"

#include <algorithm>
#include <fstream>
#include <numeric>
#include <optional>
#include <set>

#include "core/errors.hpp"
#include "core/whole_number.hpp"

namespace cb {
namespace {

[[noreturn]] void bad(std::string_view text, const std::string& why) {
  throw UsageError("-N/--topology " + std::string(text) + ": " + why +
                   " (expected cart:DIMS:RADIUS, e.g. cart:2:1, or graph:FILE)");
}

int number(std::string_view field, std::string_view whole) {
  const std::optional<int> v = whole_number<int>(field);
  if (!v) bad(whole, "'" + std::string(field) + "' is not a number");
  return *v;
}

}  // namespace

std::string TopologySpec::str() const {
  if (kind == Kind::Graph) return "graph:" + file;
  return "cart:" + std::to_string(dims) + ":" + std::to_string(radius);
}

TopologySpec parse_topology(std::string_view text) {
  TopologySpec t;
  if (text.substr(0, 6) == "graph:") {
    t.kind = TopologySpec::Kind::Graph;
    t.file = std::string(text.substr(6));
    if (t.file.empty()) bad(text, "graph: needs the adjacency file's path");
    return t;
  }
  if (text.substr(0, 5) != "cart:") bad(text, "the topology must be cart: or graph:");
  const std::string_view rest = text.substr(5);
  const size_t colon = rest.find(':');
  t.dims = number(rest.substr(0, colon), text);
  if (colon != std::string_view::npos) t.radius = number(rest.substr(colon + 1), text);
  if (t.dims < 1 || t.dims > 8) bad(text, "DIMS must be from 1 to 8");
  if (t.radius < 1) bad(text, "RADIUS must be at least 1");
  return t;
}

std::vector<std::pair<int, int>> read_graph_edges(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("-N/--topology graph:" + path + ": cannot open the adjacency file");
  std::vector<std::pair<int, int>> edges;
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;  // blank or comment
    const size_t comma = line.find(',');
    const std::optional<int> from =
        whole_number<int>(std::string_view(line).substr(0, comma == std::string::npos ? 0 : comma));
    const std::optional<int> to = comma == std::string::npos
                                      ? std::nullopt
                                      : whole_number<int>(std::string_view(line).substr(comma + 1));
    if (!from || !to)
      throw UsageError("-N/--topology graph:" + path + ": line " + std::to_string(lineno) + " ('" +
                       line + "') is not an edge SOURCE,DESTINATION");
    edges.emplace_back(*from, *to);
  }
  if (edges.empty())
    throw UsageError("-N/--topology graph:" + path + ": the adjacency file has no edge");
  return edges;
}

Topology Topology::cartesian(const TopologySpec& spec, std::vector<int> extents) {
  Topology t;
  t.spec_ = spec;
  t.extents_ = std::move(extents);
  const auto dims = t.extents_.size();
  const int n = std::accumulate(t.extents_.begin(), t.extents_.end(), 1, std::multiplies<>());
  const int r = spec.radius;
  t.out_.resize(size_t(n));
  // Row-major coordinates, as MPI_Cart_create without reordering.
  std::vector<int> stride(dims, 1);
  for (size_t d = dims; d-- > 1;) stride[d - 1] = stride[d] * t.extents_[d];
  for (int rank = 0; rank < n; ++rank) {
    std::vector<int>& mine = t.out_[size_t(rank)];
    std::vector<int> step(dims, -r);  // the displacement, as an odometer: last dimension fastest
    for (bool done = false; !done;) {
      int peer = 0;
      for (size_t d = 0; d < dims; ++d) {
        const int extent = t.extents_[d];
        const int coord = (rank / stride[d]) % extent;
        peer += ((coord + step[d]) % extent + extent) % extent * stride[d];
      }
      if (peer != rank && std::find(mine.begin(), mine.end(), peer) == mine.end())
        mine.push_back(peer);
      done = true;
      for (size_t d = dims; d-- > 0;) {
        if (step[d] < r) {
          ++step[d];
          done = false;
          break;
        }
        step[d] = -r;
      }
    }
  }
  t.in_ = t.out_;  // symmetric: every displacement has its opposite
  return t;
}

Topology Topology::graph(const TopologySpec& spec, int nranks,
                         const std::vector<std::pair<int, int>>& edges) {
  Topology t;
  t.spec_ = spec;
  t.out_.resize(size_t(nranks));
  t.in_.resize(size_t(nranks));
  const std::string where = "-N/--topology graph:" + spec.file + ": ";
  std::set<std::pair<int, int>> seen;
  for (const auto& [from, to] : edges) {
    const std::string edge = std::to_string(from) + "," + std::to_string(to);
    for (int end : {from, to})
      if (end < 0 || end >= nranks)
        throw UsageError(where + "edge " + edge + " names rank " + std::to_string(end) +
                         ", but the run has " + std::to_string(nranks) + " ranks");
    if (from == to) throw UsageError(where + "edge " + edge + " is a self-loop");
    if (!seen.insert({from, to}).second)
      throw UsageError(where + "edge " + edge + " is listed twice");
    t.out_[size_t(from)].push_back(to);
    t.in_[size_t(to)].push_back(from);
  }
  return t;
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

std::string Topology::describe() const {
  if (spec_.kind == TopologySpec::Kind::Graph) {
    size_t edges = 0;
    for (const auto& v : out_) edges += v.size();
    return "graph of " + std::to_string(edges) + " edges";
  }
  std::string grid;
  for (int e : extents_) grid += (grid.empty() ? "" : "x") + std::to_string(e);
  return "periodic grid " + grid;
}

}  // namespace cb
