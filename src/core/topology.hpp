// The virtual topology of the neighborhood collectives (MPI_Neighbor_*), OMB's `-N`:
// - `cart:DIMS:RADIUS`: a periodic Cartesian grid of DIMS dimensions (MPI_Dims_create's
//   extents); a rank's neighbors are the ranks whose coordinates differ from its own by at
//   most RADIUS in every dimension, (2*RADIUS+1)^DIMS - 1 of them, enumerated as OMB does
//   (displacements from (-R,...,-R) up, the last dimension fastest), so a cart run here
//   exchanges with the same ranks in the same order as osu_neighbor_* does.
// - `graph:FILE`: OMB's adjacency file, one directed edge "SOURCE,DESTINATION" a line
//   ('#' starts a comment line): a rank sends to the destinations of its edges and receives
//   from the sources of the edges that end at it, in the file's order.
// Every rank builds the same lists without communicating; the MPI backend makes a
// distributed-graph communicator of them (MPI_Dist_graph_create_adjacent), so the neighbor
// order is the lists' order. In a grid, a neighbor reached twice (a dimension shorter than
// 2*RADIUS+1, where -1 and +1 meet; OMB refuses such grids) is listed once and a rank is
// never its own neighbor; a graph may not repeat an edge or have a self-loop. So every
// edge is one (sender, receiver) pair and MPI's matching of messages to neighbors is
// unambiguous.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cb {

struct TopologySpec {
  enum class Kind { Cart, Graph };
  Kind kind = Kind::Cart;
  int dims = 1;             // cart:DIMS:RADIUS (OMB's default: cart:1:1)
  int radius = 1;           // neighbors up to RADIUS steps away in every dimension
  std::string file;         // graph:FILE
  std::string str() const;  // "cart:2:1", "graph:edges.txt" (parses back)
};

// "cart:DIMS:RADIUS" (DIMS 1-8, RADIUS >= 1), "cart:DIMS" (radius 1) or "graph:FILE".
// Throws UsageError naming -N otherwise (the file is read later, by read_graph_edges).
TopologySpec parse_topology(std::string_view text);

// The directed edges (source, destination) of an adjacency file, in its order. Throws
// UsageError naming the file and line when it cannot be read or a line is malformed.
std::vector<std::pair<int, int>> read_graph_edges(const std::string& path);

class Topology {
 public:
  // The grid of a cart spec; `extents`: its size per dimension (their product is the
  // number of ranks; MPI_Dims_create's balanced factorisation, obtained from MPI).
  static Topology cartesian(const TopologySpec& spec, std::vector<int> extents);
  // A graph spec's topology on `nranks` ranks from its edges (read_graph_edges). Throws
  // UsageError for a rank out of range, a self-loop or a repeated edge.
  static Topology graph(const TopologySpec& spec, int nranks,
                        const std::vector<std::pair<int, int>>& edges);

  int nranks() const { return static_cast<int>(out_.size()); }
  const std::vector<int>& extents() const { return extents_; }  // empty for a graph
  const TopologySpec& spec() const { return spec_; }
  // In MPI's terms: the destinations a rank sends to and the sources it receives from, in
  // order (a grid: the same ranks in the same order; a graph: its edges).
  const std::vector<int>& destinations(int rank) const { return out_[size_t(rank)]; }
  const std::vector<int>& sources(int rank) const { return in_[size_t(rank)]; }
  size_t max_degree() const;     // the most edges a rank sends on
  double mean_degree() const;    // edges sent per rank, on average
  std::string describe() const;  // "periodic grid 2x2" or "graph of 6 edges from FILE"

 private:
  TopologySpec spec_;
  std::vector<int> extents_;
  std::vector<std::vector<int>> out_, in_;
};

}  // namespace cb
