#include <gtest/gtest.h>

#include "core/errors.hpp"
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

}  // namespace
}  // namespace cb
