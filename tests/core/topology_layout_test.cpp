// -N's topologies (OMB's Cartesian neighborhoods and graph files) and -D's derived
// layouts: the neighbor lists every rank builds alike, the runs a layout moves, and the
// check that a derived type's run moved exactly those elements.
#include <gtest/gtest.h>

#include <cstddef>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "core/errors.hpp"
#include "core/layout.hpp"
#include "core/topology.hpp"

namespace cb {
namespace {

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(Topology, CartIsOmbsNeighborhoodInOmbsOrder) {
  // 3x3: the centre (rank 4) has all 8 others, displacements (-1,-1) first, last dim fastest.
  const Topology t = Topology::cartesian(parse_topology("cart:2:1"), {3, 3});
  EXPECT_EQ(t.destinations(4), (std::vector<int>{0, 1, 2, 3, 5, 6, 7, 8}));
  // Rank 0 at (0,0) wraps: (-1,-1) is (2,2) = rank 8.
  EXPECT_EQ(t.destinations(0), (std::vector<int>{8, 6, 7, 2, 1, 5, 3, 4}));
  EXPECT_EQ(t.sources(0), t.destinations(0));
  EXPECT_DOUBLE_EQ(t.mean_degree(), 8.0);
  // 1-D radius 2 on 5 ranks: -2, -1, +1, +2.
  const Topology ring = Topology::cartesian(parse_topology("cart:1:2"), {5});
  EXPECT_EQ(ring.destinations(0), (std::vector<int>{3, 4, 1, 2}));
}

TEST(Topology, ShortDimensionsListANeighborOnce) {
  // 2x2: -1 and +1 meet; rank 0's distinct neighbors 3, 2, 1 (first met first).
  const Topology t = Topology::cartesian(parse_topology("cart:2:1"), {2, 2});
  EXPECT_EQ(t.destinations(0), (std::vector<int>{3, 2, 1}));
  EXPECT_EQ(t.max_degree(), 3u);
  const Topology two = Topology::cartesian(parse_topology("cart:1:1"), {2});
  EXPECT_EQ(two.destinations(1), (std::vector<int>{0}));
}

TEST(Topology, GraphFileGivesEdgesInFileOrder) {
  const std::string path =
      write_file("edges.txt", "# a ring and a chord\n0,1\n1,2\n 2 , 0 \n\n0,2\n");
  const TopologySpec spec = parse_topology("graph:" + path);
  EXPECT_EQ(spec.str(), "graph:" + path);
  const Topology t = Topology::graph(spec, 3, read_graph_edges(path));
  EXPECT_EQ(t.destinations(0), (std::vector<int>{1, 2}));
  EXPECT_EQ(t.sources(0), (std::vector<int>{2}));
  EXPECT_EQ(t.sources(2), (std::vector<int>{1, 0}));
  EXPECT_TRUE(t.extents().empty());
  EXPECT_NEAR(t.mean_degree(), 4.0 / 3.0, 1e-12);
}

TEST(Topology, BadGraphsAreRefusedByName) {
  const auto refused = [](const std::string& text, int nranks, const std::string& says) {
    const std::string path = write_file("bad.txt", text);
    try {
      Topology::graph(parse_topology("graph:" + path), nranks, read_graph_edges(path));
      ADD_FAILURE() << "accepted: " << text;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  refused("0,1\n1,5\n", 4, "names rank 5");
  refused("0,0\n", 2, "self-loop");
  refused("0,1\n0,1\n", 2, "listed twice");
  refused("0;1\n", 2, "line 1");
  refused("# nothing\n", 2, "no edge");
  EXPECT_THROW(read_graph_edges("/nonexistent/edges"), UsageError);
  EXPECT_THROW(parse_topology("graph:"), UsageError);
  EXPECT_THROW(parse_topology("ring"), UsageError);
}

TEST(Layout, RunsOfEachKind) {
  using Runs = std::vector<std::pair<size_t, size_t>>;
  EXPECT_EQ(layout_runs(parse_layout("cont"), 5), (Runs{{0, 5}}));
  EXPECT_EQ(layout_runs(parse_layout("vect:4:2"), 10), (Runs{{0, 2}, {4, 2}}));
  EXPECT_EQ(layout_moved(parse_layout("vect:4:2"), 10), 4u);
  EXPECT_TRUE(layout_runs(parse_layout("vect:4:2"), 3).empty());
  const std::string path = write_file("indx.txt", "# displacement,length\n1,2\n5,1\n");
  const LayoutSpec indx = parse_layout("indx:" + path);
  EXPECT_EQ(layout_runs(indx, 8), (Runs{{1, 2}, {5, 1}}));
  EXPECT_EQ(layout_min_count(indx), 6u);
  EXPECT_TRUE(layout_runs(indx, 5).empty());
}

TEST(Layout, BadLayoutsAreRefused) {
  for (const char* text : {"vect:2:4", "vect:0:1", "vect:4", "vect:a:b", "indx:", "pack"})
    EXPECT_THROW(parse_layout(text), UsageError) << text;
  EXPECT_THROW(parse_layout("indx:" + write_file("overlap.txt", "0,4\n2,1\n")), UsageError);
  EXPECT_THROW(parse_layout("indx:/nonexistent/indx"), UsageError);
}

TEST(Layout, MismatchesCountMovedAndUntouchedElements) {
  // Two blocks of 4 one-byte elements; vect:2:1 moves elements 0 and 2 of each.
  const LayoutSpec l = parse_layout("vect:2:1");
  const auto bytes = [](std::vector<int> v) {
    std::vector<std::byte> b;
    for (int x : v) b.push_back(std::byte(x));
    return b;
  };
  const std::vector<std::byte> reference = bytes({1, 2, 3, 4, 5, 6, 7, 8});
  const std::vector<std::byte> initial = bytes({0, 0, 0, 0, 0, 0, 0, 0});
  EXPECT_EQ(layout_mismatches(l, 4, 1, reference, initial, bytes({1, 0, 3, 0, 5, 0, 7, 0})), 0u);
  // A moved element wrong, and a gap element written (as the plain type would have).
  EXPECT_EQ(layout_mismatches(l, 4, 1, reference, initial, bytes({9, 0, 3, 0, 5, 6, 7, 0})), 2u);
  // Width 2: element = 2 bytes; one block of 2 elements moves element 0 only.
  EXPECT_EQ(
      layout_mismatches(l, 2, 2, bytes({1, 1, 2, 2}), bytes({0, 0, 0, 0}), bytes({1, 1, 0, 0})),
      0u);
}

}  // namespace
}  // namespace cb
