// Fusion policies on small hand-made gradient lists, where every message can be checked.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "dl_patterns/fusion.hpp"

namespace cb::dl {
namespace {

using Members = std::vector<size_t>;

// Char gradients make sizes read directly as bytes.
Gradient g(std::string name, size_t bytes, double ready_us = 0, Dtype dtype = Dtype::Char) {
  return {std::move(name), bytes / dtype_size(dtype), dtype, ready_us};
}

FusionConfig horovod(size_t threshold, double cycle_ms = 1.0) {
  return {FusionPolicy::Horovod, threshold, cycle_ms, 0};
}
FusionConfig ddp(size_t cap, size_t first) {
  return {FusionPolicy::Ddp, cap, 1.0, first};
}

std::vector<Members> members_of(const std::vector<Message>& messages) {
  std::vector<Members> out;
  for (const Message& m : messages) out.push_back(m.members);
  return out;
}

// ---- parse_fusion / describe ----

TEST(FusionSpec, DefaultsFollowTheFrameworks) {
  EXPECT_EQ(parse_fusion("none").policy, FusionPolicy::None);
  const FusionConfig h = parse_fusion("horovod");
  EXPECT_EQ(h.policy, FusionPolicy::Horovod);
  EXPECT_EQ(h.threshold_bytes, 128u << 20);
  EXPECT_EQ(h.cycle_ms, 1.0);
  const FusionConfig d = parse_fusion("ddp");
  EXPECT_EQ(d.policy, FusionPolicy::Ddp);
  EXPECT_EQ(d.threshold_bytes, 25u << 20);
  EXPECT_EQ(d.first_bucket_bytes, 1u << 20);
}

TEST(FusionSpec, Parameters) {
  EXPECT_EQ(parse_fusion("horovod:64").threshold_bytes, 64u << 20);
  EXPECT_EQ(parse_fusion("horovod:0").threshold_bytes, 0u);
  EXPECT_EQ(parse_fusion("HoroVod:0.5:5").threshold_bytes, 512u << 10);
  EXPECT_EQ(parse_fusion("horovod:64:5").cycle_ms, 5.0);
  EXPECT_EQ(parse_fusion("horovod::2.5").threshold_bytes, 128u << 20);  // empty keeps the default
  EXPECT_EQ(parse_fusion("horovod::2.5").cycle_ms, 2.5);
  EXPECT_EQ(parse_fusion("ddp:50").threshold_bytes, 50u << 20);
  EXPECT_EQ(parse_fusion("ddp:50").first_bucket_bytes, 1u << 20);
  EXPECT_EQ(parse_fusion("ddp:50:4").first_bucket_bytes, 4u << 20);
}

TEST(FusionSpec, BadSpecsSayWhatIsExpected) {
  for (const char* bad :
       {"", "nccl", "horovod:abc", "horovod:-1", "horovod:1:2:3", "none:5", "ddp:inf", "ddp:nan",
        "horovod:1e9", "horovod:64:100000", "ddp:5MB", " ddp"}) {
    EXPECT_THROW(parse_fusion(bad), std::invalid_argument) << bad;
  }
  try {
    parse_fusion("horovod:abc");
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(
        e.what(),
        "fusion spec \"horovod:abc\": threshold (MiB) \"abc\" must be a number from 0 to 1048576");
  }
  try {
    parse_fusion("nccl");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(
        std::string(e.what()).find("expected none, horovod[:THRESHOLD_MiB[:CYCLE_ms]] or ddp"),
        std::string::npos);
  }
}

TEST(FusionSpec, Describe) {
  EXPECT_EQ(describe(parse_fusion("none")), "none (one allreduce per gradient)");
  EXPECT_EQ(describe(parse_fusion("horovod")), "horovod (fusion threshold 128 MiB, cycle 1 ms)");
  EXPECT_EQ(describe(parse_fusion("horovod:0:5")), "horovod (fusion off, cycle 5 ms)");
  EXPECT_EQ(describe(parse_fusion("ddp:2.5")), "ddp (first bucket 1 MiB, then 2.5 MiB)");
}

// ---- input checks and empty input ----

TEST(Fusion, EmptyInputGivesNoMessages) {
  for (const FusionConfig& c : {FusionConfig{}, horovod(100), ddp(100, 10)})
    EXPECT_TRUE(fuse({}, c).empty());
}

TEST(Fusion, RejectsInvalidGradients) {
  EXPECT_THROW(fuse({g("a", 0)}, FusionConfig{}), std::invalid_argument);
  EXPECT_THROW(fuse({g("a", 4, -1.0)}, horovod(100)), std::invalid_argument);
  EXPECT_THROW(fuse({g("a", 4, NAN)}, ddp(100, 10)), std::invalid_argument);
}

// ---- none ----

TEST(FusionNone, OneMessagePerGradientInReadyOrder) {
  const std::vector<Gradient> in = {g("a", 4, 5), g("b", 8, 1, Dtype::Float), g("c", 2, 5)};
  const auto out = fuse(in, FusionConfig{});
  EXPECT_EQ(members_of(out), (std::vector<Members>{{1}, {0}, {2}}));  // stable for equal times
  EXPECT_EQ(out[0].name, "b");
  EXPECT_EQ(out[0].count, 2u);
  EXPECT_EQ(out[0].dtype, Dtype::Float);
  EXPECT_EQ(out[0].ready_us, 1.0);
  EXPECT_EQ(out[2].bytes(), 2u);
}

// ---- Horovod ----

TEST(FusionHorovod, GreedyPackingUpToTheThreshold) {
  const auto out = fuse({g("a", 40), g("b", 40), g("c", 40), g("d", 20)}, horovod(100));
  EXPECT_EQ(members_of(out), (std::vector<Members>{{0, 1}, {2, 3}}));
  EXPECT_EQ(out[0].bytes(), 80u);
  EXPECT_EQ(out[0].name, "a .. b (2 tensors)");
  EXPECT_EQ(out[1].ready_us, 0.0);
}

TEST(FusionHorovod, ExactFitIsAllowed) {
  EXPECT_EQ(members_of(fuse({g("a", 60), g("b", 40), g("c", 1)}, horovod(100))),
            (std::vector<Members>{{0, 1}, {2}}));
}

TEST(FusionHorovod, LooksAheadPastAnotherDtype) {
  // b (float) is skipped while fused + skipped <= threshold; c and d join a; b goes next.
  const auto out =
      fuse({g("a", 30), g("b", 40, 0, Dtype::Float), g("c", 30), g("d", 30)}, horovod(100));
  EXPECT_EQ(members_of(out), (std::vector<Members>{{0, 2, 3}, {1}}));
  EXPECT_EQ(out[0].dtype, Dtype::Char);
  EXPECT_EQ(out[0].count, 90u);
  EXPECT_EQ(out[1].dtype, Dtype::Float);
  EXPECT_EQ(out[1].count, 10u);
}

TEST(FusionHorovod, LookAheadStopsWhenSkippedBytesWouldOverflow) {
  // Horovod tests fused (50) + skipped (60) > 100: it stops, so c is not fused into a even
  // though it would fit; c is then skipped past b (60 + 10 <= 100) and sent alone.
  const auto out = fuse({g("a", 50), g("b", 60, 0, Dtype::Float), g("c", 10)}, horovod(100));
  EXPECT_EQ(members_of(out), (std::vector<Members>{{0}, {1}, {2}}));
}

TEST(FusionHorovod, SameDtypeTooBigEndsTheLookAhead) {
  const auto out = fuse({g("a", 60), g("b", 50), g("c", 10)}, horovod(100));
  EXPECT_EQ(members_of(out), (std::vector<Members>{{0}, {1, 2}}));
}

TEST(FusionHorovod, TensorLargerThanThresholdGoesAlone) {
  EXPECT_EQ(members_of(fuse({g("big", 500), g("a", 10), g("b", 10)}, horovod(100))),
            (std::vector<Members>{{0}, {1, 2}}));
}

TEST(FusionHorovod, DtypesNeverMix) {
  const auto out = fuse({g("a", 8), g("b", 8, 0, Dtype::Float), g("c", 8, 0, Dtype::Half),
                         g("d", 8), g("e", 8, 0, Dtype::Float)},
                        horovod(1000));
  EXPECT_EQ(members_of(out), (std::vector<Members>{{0, 3}, {1, 4}, {2}}));
  for (const Message& m : out) EXPECT_EQ(m.bytes(), 8u * m.members.size());
}

TEST(FusionHorovod, CycleBoundaries) {
  // Cycle ends every 1000 us; a tensor ready exactly at an end is handled at that end.
  const auto out =
      fuse({g("a", 4, 0), g("b", 4, 500), g("c", 4, 1000), g("d", 4, 1001), g("e", 4, 2500)},
           horovod(100, 1.0));
  EXPECT_EQ(members_of(out), (std::vector<Members>{{0}, {1, 2}, {3}, {4}}));
  EXPECT_EQ(out[0].ready_us, 0.0);
  EXPECT_EQ(out[1].ready_us, 1000.0);
  EXPECT_EQ(out[2].ready_us, 2000.0);
  EXPECT_EQ(out[3].ready_us, 3000.0);
}

TEST(FusionHorovod, LongerCycleFusesMore) {
  const std::vector<Gradient> in = {g("a", 4, 0), g("b", 4, 500), g("c", 4, 1000), g("d", 4, 4900)};
  EXPECT_EQ(fuse(in, horovod(100, 5.0)).size(), 2u);  // ends at 0 and 5000
  EXPECT_EQ(members_of(fuse(in, horovod(100, 5.0)))[1], (Members{1, 2, 3}));
  EXPECT_EQ(fuse(in, horovod(100, 5.0))[1].ready_us, 5000.0);
}

TEST(FusionHorovod, ZeroCycleFusesOnlySimultaneousTensors) {
  const auto out = fuse({g("a", 4, 7), g("b", 4, 7), g("c", 4, 9)}, horovod(100, 0.0));
  EXPECT_EQ(members_of(out), (std::vector<Members>{{0, 1}, {2}}));
  EXPECT_EQ(out[1].ready_us, 9.0);
}

TEST(FusionHorovod, ZeroThresholdDisablesFusion) {
  const auto out = fuse({g("a", 4, 0), g("b", 4, 200), g("c", 4, 300)}, horovod(0));
  EXPECT_EQ(members_of(out), (std::vector<Members>{{0}, {1}, {2}}));
  EXPECT_EQ(out[2].ready_us, 1000.0);  // still launched at the cycle end
}

// ---- DDP ----

TEST(FusionDdp, FirstBucketSmallerThenCapAndBucketsOvershoot) {
  // first limit 10: 4+4+4 = 12 closes it; cap 25: 20+10 = 30 closes; 5 is left over.
  const auto out =
      fuse({g("a", 4), g("b", 4), g("c", 4), g("d", 20), g("e", 10), g("f", 5)}, ddp(25, 10));
  EXPECT_EQ(members_of(out), (std::vector<Members>{{0, 1, 2}, {3, 4}, {5}}));
  EXPECT_EQ(out[0].bytes(), 12u);
  EXPECT_EQ(out[1].bytes(), 30u);
  EXPECT_EQ(out[0].name, "bucket 0: a .. c (3 tensors)");
  EXPECT_EQ(out[2].name, "bucket 2: f");
}

TEST(FusionDdp, ReadyWhenTheLastMemberIsReady) {
  const auto out = fuse({g("a", 6, 1), g("b", 6, 3), g("c", 30, 8), g("d", 1, 9)}, ddp(25, 10));
  EXPECT_EQ(members_of(out), (std::vector<Members>{{0, 1}, {2}, {3}}));
  EXPECT_EQ(out[0].ready_us, 3.0);
  EXPECT_EQ(out[1].ready_us, 8.0);
  EXPECT_EQ(out[2].ready_us, 9.0);
}

TEST(FusionDdp, DtypesHaveSeparateBucketsAndLimits) {
  // Float bytes: 8 + 8 closes the float first bucket (>= 10); char fills its own.
  const auto out = fuse({g("c1", 6, 0), g("f1", 8, 1, Dtype::Float), g("c2", 6, 2),
                         g("f2", 8, 3, Dtype::Float), g("c3", 6, 4), g("f3", 8, 5, Dtype::Float)},
                        ddp(25, 10));
  // Closing order: char {c1,c2} at 2, float {f1,f2} at 3; then leftovers by first arrival: c3, f3.
  EXPECT_EQ(members_of(out), (std::vector<Members>{{0, 2}, {1, 3}, {4}, {5}}));
  for (const Message& m : out)
    EXPECT_EQ(m.dtype, m.members.front() % 2 ? Dtype::Float : Dtype::Char);
  EXPECT_EQ(out[1].count, 4u);
}

TEST(FusionDdp, BucketsLaunchInOrder) {
  // The char leftover {a} is ready at 0 but launches after the float bucket closed at 5.
  const auto out = fuse({g("a", 1, 0), g("f", 40, 5, Dtype::Float)}, ddp(25, 10));
  EXPECT_EQ(members_of(out), (std::vector<Members>{{1}, {0}}));
  EXPECT_EQ(out[1].ready_us, 5.0);
}

TEST(FusionDdp, ZeroCapGivesOneBucketPerTensor) {
  EXPECT_EQ(fuse({g("a", 4), g("b", 4), g("c", 4)}, ddp(0, 0)).size(), 3u);
}

// ---- to_trace ----

TEST(FusionTrace, ComputeIsTheGapBetweenReadyTimes) {
  const auto out = fuse({g("a", 4, 2), g("b", 4, 2), g("c", 4, 10)}, FusionConfig{});
  const Trace t = to_trace(out, "toy", "test");
  ASSERT_EQ(t.ops.size(), 3u);
  EXPECT_EQ(t.name, "toy");
  EXPECT_EQ(t.ops[0].compute_us, 2.0);
  EXPECT_EQ(t.ops[1].compute_us, 0.0);
  EXPECT_EQ(t.ops[2].compute_us, 8.0);
  EXPECT_EQ(t.ops[2].coll, Coll::Allreduce);
  EXPECT_EQ(t.ops[2].name, "c");
  EXPECT_EQ(t.ops[2].count, 4u);
}

}  // namespace
}  // namespace cb::dl
