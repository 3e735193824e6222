#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "core/errors.hpp"
#include "harness/environment.hpp"
#include "harness/rdma.hpp"
#include "pt2pt/pt2pt.hpp"

namespace cb {
namespace {

constexpr Pt2ptSpec kTwoRanks{Pt2ptMetric::Latency, 1, false, true, false, nullptr};
constexpr Pt2ptSpec kPairs{Pt2ptMetric::MessageRate, 1, true, false, true, nullptr};

TEST(Layout, TwoRankBenchmarksNeedExactlyTwo) {
  Role role;
  int peer;
  pt2pt_layout(kTwoRanks, 0, 2, 0, role, peer);
  EXPECT_EQ(role, Role::Sender);
  EXPECT_EQ(peer, 1);
  pt2pt_layout(kTwoRanks, 1, 2, 0, role, peer);
  EXPECT_EQ(role, Role::Receiver);
  EXPECT_EQ(peer, 0);
  EXPECT_THROW(pt2pt_layout(kTwoRanks, 0, 3, 0, role, peer), UsageError);
  EXPECT_THROW(pt2pt_layout(kTwoRanks, 0, 1, 0, role, peer), UsageError);
}

TEST(Layout, PairsFollowOmbBlockPlacement) {
  Role role;
  int peer;
  pt2pt_layout(kPairs, 1, 6, 0, role, peer);  // 3 pairs: 1 -> 4
  EXPECT_EQ(role, Role::Sender);
  EXPECT_EQ(peer, 4);
  pt2pt_layout(kPairs, 5, 6, 0, role, peer);
  EXPECT_EQ(role, Role::Receiver);
  EXPECT_EQ(peer, 2);
  pt2pt_layout(kPairs, 4, 5, 2, role, peer);  // -p 2 on 5 ranks: rank 4 idles
  EXPECT_EQ(role, Role::Idle);
  EXPECT_THROW(pt2pt_layout(kPairs, 0, 5, 0, role, peer), UsageError);  // odd, no -p
  EXPECT_THROW(pt2pt_layout(kPairs, 0, 4, 3, role, peer), UsageError);  // 3 pairs > 4 ranks
}

// --- line rate: MB/s (10^6 B/s) against Gb/s (10^9 bit/s) ---------------------------------

TEST(LineRate, MegabytesPerSecondToGigabitsPerSecond) {
  EXPECT_DOUBLE_EQ(mbps_to_gbps(12500), 100.0);  // 12.5 GB/s = 100 Gb/s
  EXPECT_DOUBLE_EQ(mbps_to_gbps(1000), 8.0);
  EXPECT_DOUBLE_EQ(mbps_to_gbps(0), 0.0);
}

TEST(LineRate, PercentOfTheBound) {
  EXPECT_DOUBLE_EQ(line_rate_percent(12500, 100), 100.0);  // EDR 4x: 100 Gb/s
  EXPECT_DOUBLE_EQ(line_rate_percent(24000, 200), 96.0);   // 192 Gb/s on HDR 4x
  EXPECT_DOUBLE_EQ(line_rate_percent(6250, 100), 50.0);
  EXPECT_DOUBLE_EQ(line_rate_percent(50000, 2 * 200), 100.0);  // bibw: both directions
  EXPECT_DOUBLE_EQ(line_rate_percent(1234, 0), 0.0);           // no bound, no percentage
  EXPECT_DOUBLE_EQ(line_rate_percent(1234, -1), 0.0);
}

TEST(LineRate, BoundNeedsEveryPairAcrossNodes) {
  // cb_bw / cb_bibw: ranks 0 and 1 on two nodes: one link, per direction.
  auto b = line_rate_bound(200, 1, 1, {0, 1});
  EXPECT_DOUBLE_EQ(b.bound_gbps, 200.0);
  EXPECT_EQ(b.links, 1);
  EXPECT_TRUE(b.why_not.empty());
  EXPECT_DOUBLE_EQ(line_rate_bound(200, 2, 1, {0, 1}).bound_gbps, 400.0);
  // Both on one node: shared memory, not the NIC.
  b = line_rate_bound(200, 1, 1, {0, 0});
  EXPECT_EQ(b.bound_gbps, 0.0);
  EXPECT_NE(b.why_not.find("one node"), std::string::npos) << b.why_not;
  // No rate known.
  b = line_rate_bound(0, 1, 1, {0, 1});
  EXPECT_EQ(b.bound_gbps, 0.0);
  EXPECT_FALSE(b.why_not.empty());
}

TEST(LineRate, BoundOfSeveralPairs) {
  // mbw_mr, 4 pairs, 2 nodes x 4 ranks (senders 0-3 on node 0): one NIC each way.
  auto b = line_rate_bound(100, 1, 4, {0, 0, 0, 0, 1, 1, 1, 1});
  EXPECT_EQ(b.cross_node_pairs, 4);
  EXPECT_EQ(b.links, 1);
  EXPECT_DOUBLE_EQ(b.bound_gbps, 100.0);
  // 2 pairs on 4 nodes, one rank each: two links at once.
  b = line_rate_bound(100, 1, 2, {0, 1, 2, 3});
  EXPECT_EQ(b.links, 2);
  EXPECT_DOUBLE_EQ(b.bound_gbps, 200.0);
  // Round-robin placement on 2 nodes: 0 -> 2 and 1 -> 3 stay on their nodes.
  b = line_rate_bound(100, 1, 2, {0, 1, 0, 1});
  EXPECT_EQ(b.cross_node_pairs, 0);
  EXPECT_EQ(b.bound_gbps, 0.0);
  // Mixed: one pair crosses, one does not: no percentage of an unclear bound.
  b = line_rate_bound(100, 1, 2, {0, 0, 1, 0});
  EXPECT_EQ(b.cross_node_pairs, 1);
  EXPECT_EQ(b.bound_gbps, 0.0);
  EXPECT_NE(b.why_not.find("1 of 2 pairs"), std::string::npos) << b.why_not;
  // -p 1 on 3 ranks: rank 2 idles and does not count.
  EXPECT_DOUBLE_EQ(line_rate_bound(100, 1, 1, {0, 1, 1}).bound_gbps, 100.0);
}

TEST(LineRate, FastestActivePort) {
  const auto rdma = nlohmann::json::parse(R"({"devices": [
    {"name": "mlx5_0", "ports": [{"port": 1, "state": "down", "rate_gbps": 400},
                                 {"port": 2, "state": "active", "rate_gbps": 100,
                                  "link_layer": "InfiniBand", "width": "4x", "speed": "EDR"}]},
    {"name": "mlx5_1", "ports": [{"port": 1, "state": "active", "rate_gbps": 200,
                                  "link_layer": "InfiniBand", "width": "4x", "speed": "HDR"}]}]})");
  const auto port = fastest_active_port(rdma);
  ASSERT_FALSE(port.is_null());
  EXPECT_EQ(port["device"], "mlx5_1");
  EXPECT_EQ(port["port"], 1);
  EXPECT_EQ(port["rate_gbps"], 200.0);
  EXPECT_EQ(port["speed"], "HDR");
  EXPECT_DOUBLE_EQ(max_link_rate_gbps(rdma), 200.0);
  const auto none = nlohmann::json::parse(R"({"devices": [], "unavailable": "why"})");
  EXPECT_TRUE(fastest_active_port(none).is_null());
}

// --- launcher, from the variables it sets ---------------------------------------------------

LauncherGuess guess(const std::map<std::string, std::string>& env, int nranks = 2) {
  return detect_launcher(
      [&](const char* name) -> const char* {
        const auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      nranks);
}

TEST(Launcher, DetectedFromItsVariables) {
  EXPECT_EQ(guess({{"MPI_LOCALNRANKS", "2"}, {"PMI_SIZE", "2"}}).name, "mpirun (hydra)");
  EXPECT_EQ(guess({{"OMPI_COMM_WORLD_SIZE", "4"}}).name, "mpirun (Open MPI)");
  const auto srun = guess({{"SLURM_JOB_ID", "7"}, {"SLURM_STEP_ID", "0"}, {"SLURM_PROCID", "1"}});
  EXPECT_EQ(srun.name, "srun");
  EXPECT_EQ(srun.variable, "SLURM_STEP_ID");
  EXPECT_EQ(guess({{"SLURM_STEPID", "0"}, {"SLURM_PROCID", "0"}}).name, "srun");
  // mpirun inside a Slurm allocation starts its daemons with srun: its own marker wins.
  EXPECT_EQ(guess({{"SLURM_JOB_ID", "7"},
                   {"SLURM_STEP_ID", "0"},
                   {"SLURM_PROCID", "0"},
                   {"MPI_LOCALNRANKS", "8"}})
                .name,
            "mpirun (hydra)");
  EXPECT_EQ(guess({{"SLURM_JOB_ID", "7"},
                   {"SLURM_STEP_ID", "0"},
                   {"SLURM_PROCID", "0"},
                   {"OMPI_COMM_WORLD_SIZE", "8"}})
                .name,
            "mpirun (Open MPI)");
  // A batch script's own process (no step) is not srun; a singleton has no launcher.
  EXPECT_EQ(guess({{"SLURM_JOB_ID", "7"}}, 1).name, "none");
  EXPECT_EQ(guess({}, 1).name, "none");
  EXPECT_EQ(guess({{"PMI_SIZE", "1"}}, 1).name, "unknown");
  EXPECT_EQ(guess({}, 4).name, "unknown");
  EXPECT_EQ(guess({{"MPI_LOCALNRANKS", ""}}, 1).name, "none");  // empty = unset
}

TEST(Launcher, RanksPerNode) {
  EXPECT_EQ(ranks_per_node_json({2}), nlohmann::json(2));
  EXPECT_EQ(ranks_per_node_json({4, 4, 4}), nlohmann::json(4));
  EXPECT_EQ(ranks_per_node_json({3, 1}), nlohmann::json({3, 1}));
}

}  // namespace
}  // namespace cb
