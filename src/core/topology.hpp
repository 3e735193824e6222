// The virtual topology of the neighborhood collectives (MPI_Neighbor_*): OMB's
// `-N cart:DIMS:RADIUS`, a periodic Cartesian grid of DIMS dimensions in which a rank's
// neighbors are the ranks 1 ... RADIUS steps away along each dimension, both ways. Every
// rank builds the same lists from the grid's extents, without communicating; the MPI
// backend makes a distributed-graph communicator of them (MPI_Dist_graph_create_adjacent),
// so the neighbor order is the lists' order. A neighbor reached twice (a short dimension,
// where +1 and -1 meet) is listed once, and a rank is never its own neighbor, so every edge
// is one (sender, receiver) pair and MPI's matching of messages to neighbors is unambiguous.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cb {

struct TopologySpec {
  int dims = 2;             // cart:DIMS:RADIUS
  int radius = 1;           // neighbors up to RADIUS steps away along each dimension
  std::string str() const;  // "cart:2:1" (parses back)
};

// "cart:DIMS:RADIUS" (DIMS 1-8, RADIUS >= 1) or "cart:DIMS" (radius 1). Throws UsageError
// naming -N otherwise.
TopologySpec parse_topology(std::string_view text);

class Topology {
 public:
  // `extents`: the grid (their product is the number of ranks; MPI_Dims_create's
  // balanced factorisation, which the caller obtains from MPI).
  Topology(const TopologySpec& spec, std::vector<int> extents);

  int nranks() const { return static_cast<int>(out_.size()); }
  const std::vector<int>& extents() const { return extents_; }
  const TopologySpec& spec() const { return spec_; }
  // In MPI's terms: the destinations a rank sends to and the sources it receives from, in
  // order (symmetric here: the same ranks, in the same order).
  const std::vector<int>& destinations(int rank) const { return out_[size_t(rank)]; }
  const std::vector<int>& sources(int rank) const { return in_[size_t(rank)]; }
  size_t max_degree() const;
  double mean_degree() const;

 private:
  TopologySpec spec_;
  std::vector<int> extents_;
  std::vector<std::vector<int>> out_, in_;
};

}  // namespace cb
