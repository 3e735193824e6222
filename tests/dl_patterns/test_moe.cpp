// MoE replay plans: the router's token counts add up (every token to top_k distinct experts),
// are the same for every caller (seeded), follow the skew asked for, and the step issues
// dispatch/combine forward and their gradients backward with the transposed matrices.
#include <gtest/gtest.h>

#include <numeric>
#include <stdexcept>

#include "dl_patterns/moe.hpp"

namespace cb::dl {
namespace {

using Kind = ReplayAction::Kind;

const MoeModel& mixtral() {
  const MoeModel* m = find_moe_model("Mixtral-8x7B");
  EXPECT_NE(m, nullptr);
  return *m;
}

TEST(Moe, RegistryHoldsThePublishedShapes) {
  const MoeModel& m = mixtral();
  EXPECT_EQ(m.layers, 32);
  EXPECT_EQ(m.hidden, 4096u);
  EXPECT_EQ(m.experts, 8);
  EXPECT_EQ(m.top_k, 2);
  const MoeModel* s = find_moe_model("switch-base-8");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->top_k, 1);
  EXPECT_EQ(s->hidden, 768u);
  EXPECT_EQ(find_moe_model("gpt2"), nullptr);
}

TEST(Moe, EveryTokenGoesToTopKExpertsAndRowsAddUp) {
  for (const char* router : {"uniform", "zipf:1.5,3", "random:9"})
    for (int n : {1, 2, 3, 4, 8}) {
      const std::vector<size_t> c =
          route_tokens(mixtral(), parse_counts_pattern(router), 5, 1000, n);
      ASSERT_EQ(c.size(), size_t(n * n));
      for (int from = 0; from < n; ++from) {
        size_t row = 0;
        for (int to = 0; to < n; ++to) row += c[size_t(from * n + to)];
        EXPECT_EQ(row, 1000u * 2) << router << " n=" << n;  // top-2
      }
    }
}

TEST(Moe, SeededSameForEveryCallerAndDifferentPerLayerAndSeed) {
  const CountsPattern z = parse_counts_pattern("zipf:1.2,7");
  EXPECT_EQ(route_tokens(mixtral(), z, 3, 512, 4), route_tokens(mixtral(), z, 3, 512, 4));
  EXPECT_NE(route_tokens(mixtral(), z, 3, 512, 4), route_tokens(mixtral(), z, 4, 512, 4));
  EXPECT_NE(route_tokens(mixtral(), z, 3, 512, 4),
            route_tokens(mixtral(), parse_counts_pattern("zipf:1.2,8"), 3, 512, 4));
}

TEST(Moe, SkewLoadsOneRankUniformDoesNot) {
  const int n = 8;  // one expert per rank: the load of a rank is its expert's
  double uniform_worst = 0, zipf_worst = 0;
  for (int layer = 0; layer < 4; ++layer) {
    const CountMatrix u(route_tokens(mixtral(), parse_counts_pattern("uniform"), layer, 4096, n),
                        n);
    const CountMatrix z(route_tokens(mixtral(), parse_counts_pattern("zipf:2,1"), layer, 4096, n),
                        n);
    uniform_worst = std::max(uniform_worst, u.imbalance());
    zipf_worst = std::max(zipf_worst, z.imbalance());
  }
  EXPECT_LT(uniform_worst, 1.1);  // sampling noise only
  // Zipf s=2 over 8 experts, top-2 without replacement: the top expert is in ~75% of the
  // tokens' pairs, 3x the average of 25% (2 of 8).
  EXPECT_GT(zipf_worst, 2.5);
}

TEST(Moe, MoreRanksThanExpertsIsRefused) {
  EXPECT_THROW(route_tokens(mixtral(), {}, 0, 16, 9), std::invalid_argument);
  EXPECT_THROW(route_tokens(mixtral(), {}, 0, 16, 0), std::invalid_argument);
}

TEST(Moe, TransposedMatrixReversesTheExchange) {
  const CountMatrix m(route_tokens(mixtral(), parse_counts_pattern("random:4"), 0, 300, 3), 3);
  const CountMatrix t = m.transposed();
  for (int a = 0; a < 3; ++a) {
    EXPECT_EQ(t.send_total(a), m.recv_total(a));
    EXPECT_EQ(t.recv_total(a), m.send_total(a));
    for (int b = 0; b < 3; ++b) EXPECT_EQ(t.count(a, b), m.count(b, a));
  }
  EXPECT_THROW(CountMatrix(std::vector<size_t>(5), 2), std::invalid_argument);
}

TEST(Moe, StepIssuesFourExchangesPerLayerEachWaitedFor) {
  const int n = 2;
  const MoeConfig cfg{&mixtral(), 64, parse_counts_pattern("zipf:1.2,7")};
  const ReplayPlan p = plan_moe(cfg, Dtype::Float, {}, n, 0);
  ASSERT_EQ(p.messages.size(), 4u * 32);
  EXPECT_TRUE(p.dependencies);
  EXPECT_EQ(p.messages.front().name, "moe.fwd_dispatch[0]");
  EXPECT_EQ(p.messages[1].name, "moe.fwd_combine[0]");
  EXPECT_EQ(p.messages[2 * 32].name, "moe.bwd_combine[31]");
  EXPECT_EQ(p.messages.back().name, "moe.bwd_dispatch[0]");
  for (size_t k = 0; k < p.messages.size(); ++k) {
    const ReplayMessage& m = p.messages[k];
    ASSERT_TRUE(m.counts) << k;
    EXPECT_EQ(m.coll, Coll::Alltoallv);
    if (m.name.find("fwd_dispatch") != std::string::npos) {  // top-2 of each rank's tokens
      for (int r = 0; r < n; ++r) EXPECT_EQ(m.counts->send_total(r), 64u * 2 * 4096);
    }
    EXPECT_EQ(m.count, 64u * 2 * 4096 / n);  // the mean per peer, the same reversed
  }
  // Combine is the dispatch reversed; backward reuses the forward matrices.
  for (int r = 0; r < n; ++r)
    EXPECT_EQ(p.messages[1].counts->send_total(r), p.messages[0].counts->recv_total(r));
  EXPECT_EQ(p.messages[2 * 32 + 2 * 31].counts, p.messages[0].counts);
  // Launch k is followed by the wait for k: no exchange overlaps the next.
  size_t launches = 0;
  for (size_t i = 0; i + 1 < p.actions.size(); ++i)
    if (p.actions[i].kind == Kind::Launch) {
      ++launches;
      EXPECT_EQ(p.actions[i + 1].kind, Kind::Wait);
      EXPECT_EQ(p.actions[i + 1].message, p.actions[i].message);
    }
  EXPECT_EQ(launches, p.messages.size());
  EXPECT_EQ(p.compute_us(), 0.0);
}

TEST(Moe, ComputeFollowsTheTokensEachRankHolds) {
  const int n = 2;
  const MoeConfig cfg{&mixtral(), 256, parse_counts_pattern("zipf:3,2")};
  const ComputeSpec c{ComputeSpec::Mode::PerMiB, 100};
  double dense = 0, experts = 0;
  for (int r = 0; r < n; ++r) {
    const ReplayPlan p = plan_moe(cfg, Dtype::Float, c, n, r);
    // Dense part: 256 tokens of 16 KiB = 4 MiB per layer and pass: 0.5 x 400 + 400 us.
    dense = 32 * (0.5 + 1.0) * 100 * 4;
    double recv_mib = 0;
    for (size_t l = 0; l < 32; ++l)
      recv_mib += double(p.messages[2 * l].counts->recv_total(r)) * 4 / double(kMiB);
    experts = (0.5 + 1.0) * 100 * recv_mib;
    EXPECT_NEAR(p.compute_us(), dense + experts, 1e-6 * (dense + experts)) << r;
  }
}

}  // namespace
}  // namespace cb::dl
