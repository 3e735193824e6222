// cb_replay's plan: compute specs, when each message launches, what fusion does to
// traces, and the action sequence of a step (the step accounting).
#include <gtest/gtest.h>

#include <stdexcept>

#include "dl_patterns/replay_plan.hpp"
#include "test_util.hpp"

namespace cb::dl {
namespace {

using Kind = ReplayAction::Kind;
using testing::data_path;

ReplayMessage ready_at(double us, int segment = 0) {
  ReplayMessage m;
  m.count = 1;
  m.ready_us = us;
  m.segment = segment;
  return m;
}

// "C10 L0 I5 W": the actions as a compact string, so whole sequences compare at once.
std::string text(const std::vector<ReplayAction>& actions) {
  std::string s;
  for (const ReplayAction& a : actions) {
    if (!s.empty()) s += ' ';
    switch (a.kind) {
      case Kind::Compute:
        s += "C" + std::to_string(static_cast<long>(a.us + 0.5));
        break;
      case Kind::Idle:
        s += "I" + std::to_string(static_cast<long>(a.us + 0.5));
        break;
      case Kind::Launch:
        s += "L" + std::to_string(a.message);
        break;
      case Kind::WaitAll:
        s += "W";
        break;
      case Kind::Wait:
        s += "A" + std::to_string(a.message);
        break;
    }
  }
  return s;
}

TraceOp op(Coll coll, size_t count, double compute_us = 0, int iteration = 0) {
  TraceOp o;
  o.coll = coll;
  o.count = count;
  o.compute_us = compute_us;
  o.iteration = iteration;
  return o;
}

TEST(ReplayCompute, ParsesTheThreeModes) {
  EXPECT_EQ(parse_compute("none").mode, ComputeSpec::Mode::None);
  EXPECT_EQ(parse_compute("trace").mode, ComputeSpec::Mode::Trace);
  const ComputeSpec c = parse_compute("us-per-mb:12.5");
  EXPECT_EQ(c.mode, ComputeSpec::Mode::PerMiB);
  EXPECT_DOUBLE_EQ(c.us_per_mib, 12.5);
  EXPECT_EQ(describe(c), "us-per-mb:12.5");
  EXPECT_EQ(describe(parse_compute("us-per-mb:0")), "us-per-mb:0");
  EXPECT_EQ(describe(parse_compute("trace")), "trace");
}

TEST(ReplayCompute, RejectsBadSpecs) {
  for (const char* bad :
       {"", "None", "us-per-mb", "us-per-mb:", "us-per-mb:-1", "us-per-mb:abc", "us-per-mb:5x",
        "us-per-mb:inf", "us-per-mb:nan", "us-per-mb:1e400", "per-mb:3", "trace:1"})
    EXPECT_THROW(parse_compute(bad), std::invalid_argument) << bad;
  try {
    parse_compute("gpu");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("none, trace or us-per-mb:X"), std::string::npos);
  }
}

TEST(ReplaySchedule, ComputesUntilEachMessageIsReady) {
  const auto a = schedule({ready_at(0), ready_at(10), ready_at(10), ready_at(30)}, {30});
  EXPECT_EQ(text(a), "L0 C10 L1 L2 C20 L3 W");
}

TEST(ReplaySchedule, IdlesPastTheComputeEndAndComputesWhatIsLeft) {
  // Backward ends at 25, a Horovod cycle launches at 30: 5 us idle, not compute.
  EXPECT_EQ(text(schedule({ready_at(10), ready_at(30)}, {25})), "C10 L0 C15 I5 L1 W");
  // Compute after the last launch still runs before the step ends.
  EXPECT_EQ(text(schedule({ready_at(10)}, {40})), "C10 L0 C30 W");
}

TEST(ReplaySchedule, EverySegmentEndsWithAWaitAndTheClockCarriesOn) {
  const auto a = schedule({ready_at(5, 0), ready_at(12, 1), ready_at(20, 1)}, {8, 20});
  EXPECT_EQ(text(a), "C5 L0 C3 W C4 L1 C8 L2 W");
  EXPECT_EQ(text(schedule({}, {7})), "C7 W");
}

TEST(ReplaySchedule, WithoutComputeKeepsLaunchesAndWaits) {
  const auto a = schedule({ready_at(10), ready_at(30)}, {25});
  EXPECT_EQ(text(without_compute(a)), "L0 L1 W");
}

TEST(ReplayPlanModel, OneMessagePerTensorWithoutFusion) {
  const Model& m = *find_model("resnet50");
  const ReplayPlan p = plan_model(m, Dtype::Float, parse_fusion("none"), parse_compute("none"));
  EXPECT_EQ(p.messages.size(), 161u);
  EXPECT_EQ(p.total_bytes(), 102'228'128u);
  EXPECT_EQ(p.actions.size(), 162u);  // 161 launches, then the wait
  EXPECT_EQ(p.compute_us(), 0);
  EXPECT_EQ(p.messages.front().name, "fc.bias");  // backward: last layer first
  EXPECT_EQ(p.messages.front().record, 0u);
}

TEST(ReplayPlanModel, ComputeIsProportionalToGradientSize) {
  const Model& m = *find_model("resnet50");
  const double expected = 100.0 * 102'228'128 / (1 << 20);
  const ReplayPlan p =
      plan_model(m, Dtype::Float, parse_fusion("none"), parse_compute("us-per-mb:100"));
  EXPECT_NEAR(p.compute_us(), expected, 1e-6 * expected);
  EXPECT_NEAR(p.messages.back().ready_us, expected, 1e-6 * expected);
  EXPECT_EQ(p.idle_us(), 0);
  for (size_t k = 1; k < p.messages.size(); ++k)
    EXPECT_GE(p.messages[k].ready_us, p.messages[k - 1].ready_us);
  // --compute trace with a model: the documented default rate.
  const ReplayPlan t = plan_model(m, Dtype::Float, parse_fusion("none"), parse_compute("trace"));
  EXPECT_NEAR(t.compute_us(), expected * kModelDefaultUsPerMiB / 100, 1e-3);
}

TEST(ReplayPlanModel, FusionGroupsAsTheFrameworks) {
  const Model& m = *find_model("resnet50");
  const ReplayPlan ddp = plan_model(m, Dtype::Float, parse_fusion("ddp"), parse_compute("none"));
  EXPECT_EQ(ddp.messages.size(), 5u);  // 7.82, 30.04, 25.04, 25.32, 9.27 MiB
  EXPECT_EQ(ddp.total_bytes(), 102'228'128u);
  EXPECT_EQ(ddp.messages.front().members + ddp.messages[1].members + ddp.messages[2].members +
                ddp.messages[3].members + ddp.messages[4].members,
            161u);
  const ReplayPlan hvd =
      plan_model(m, Dtype::Float, parse_fusion("horovod"), parse_compute("none"));
  EXPECT_EQ(hvd.messages.size(), 1u);  // all ready at once, 97.5 MiB < 128 MiB
  // With compute, Horovod cycles end after the backward: idle, not compute.
  const ReplayPlan cyc =
      plan_model(m, Dtype::Float, parse_fusion("horovod"), parse_compute("us-per-mb:100"));
  EXPECT_GT(cyc.messages.size(), 1u);
  EXPECT_NEAR(cyc.compute_us(), 100.0 * 102'228'128 / (1 << 20), 1e-3);
  EXPECT_GT(cyc.idle_us(), 0);
  EXPECT_LE(cyc.idle_us(), 1000);  // at most one 1 ms cycle
}

TEST(ReplayPlanModel, DtypeChangesTheGradients) {
  const ReplayPlan p =
      plan_model(*find_model("vgg16"), Dtype::Half, parse_fusion("none"), parse_compute("none"));
  EXPECT_EQ(p.total_bytes(), 138'357'544u * 2);
  EXPECT_EQ(p.messages.front().dtype, Dtype::Half);
}

TEST(ReplayPlanTrace, StepsBecomeSegmentsAndComputeComesFromTheTrace) {
  const Trace t = load_trace(data_path("small.trace.json"));  // 2 steps, 12.5 us each
  const ReplayPlan p = plan_trace(t, parse_fusion("none"), parse_compute("trace"));
  ASSERT_EQ(p.messages.size(), 4u);
  EXPECT_EQ(p.segments, 2);
  EXPECT_EQ(p.messages[1].coll, Coll::Bcast);
  EXPECT_EQ(p.messages[1].root, 3);
  EXPECT_EQ(p.messages[3].record, 3u);
  EXPECT_EQ(text(p.actions), "C13 L0 L1 W C13 L2 L3 W");
  EXPECT_DOUBLE_EQ(p.compute_us(), 25);
  // Without compute the trace's compute_us is ignored.
  EXPECT_EQ(text(plan_trace(t, parse_fusion("none"), parse_compute("none")).actions),
            "L0 L1 W L2 L3 W");
}

TEST(ReplayPlanTrace, FusionStopsAtOtherCollectivesAndNonSumReductions) {
  Trace t;
  t.ops = {op(Coll::Allreduce, 100), op(Coll::Allreduce, 100), op(Coll::Bcast, 10),
           op(Coll::Allreduce, 100), op(Coll::Allreduce, 100), op(Coll::Allreduce, 100)};
  t.ops[4].op = Op::Max;  // not a gradient: replayed as it is
  const ReplayPlan p = plan_trace(t, parse_fusion("horovod"), parse_compute("none"));
  ASSERT_EQ(p.messages.size(), 5u);
  EXPECT_EQ(p.messages[0].members, 2u);
  EXPECT_EQ(p.messages[0].count, 200u);
  EXPECT_EQ(p.messages[1].coll, Coll::Bcast);
  EXPECT_EQ(p.messages[2].record, 3u);
  EXPECT_EQ(p.messages[3].op, Op::Max);
  EXPECT_EQ(p.messages[4].record, 5u);
  EXPECT_EQ(plan_trace(t, parse_fusion("ddp"), parse_compute("none")).messages.size(), 5u);
}

TEST(ReplayPlanTrace, ProcessGroupsStopFusionAndSizeTheBuffers) {
  Trace t;
  t.world_size = 4;
  t.ops = {op(Coll::Allreduce, 100), op(Coll::Allreduce, 100), op(Coll::Allreduce, 100),
           op(Coll::Allgather, 10),  op(Coll::Allreduce, 100), op(Coll::Allreduce, 100)};
  t.ops[1].group = t.ops[2].group = t.ops[3].group = {0, 1};
  t.ops[4].group = {0, 1, 2, 3};  // every rank of the job: no sub-communicator
  t.ops[5].group = {2, 3};
  const ReplayPlan p = plan_trace(t, parse_fusion("horovod"), parse_compute("none"));
  ASSERT_EQ(p.groups, (std::vector<std::vector<int>>{{0, 1}, {2, 3}}));
  ASSERT_EQ(p.messages.size(), 5u);  // 0 | 1+2 | allgather | 4 | 5
  EXPECT_EQ(p.messages[0].group, -1);
  EXPECT_EQ(p.messages[1].group, 0);
  EXPECT_EQ(p.messages[1].members, 2u);
  EXPECT_EQ(p.messages[2].group, 0);
  EXPECT_EQ(p.messages[3].group, -1);
  EXPECT_EQ(p.messages[4].group, 1);
  EXPECT_EQ(p.ranks_of(p.messages[2], 4), 2);
  // The allgather receives from its group's 2 ranks, not the 4 of the job.
  EXPECT_EQ(share_buffers(p, 4).bytes.size(), 5u);
  EXPECT_EQ(share_buffers(p, 4).bytes[2], (10u + 20u) * 4);
  // Exported, the groups stay.
  const Trace back = to_trace(p, "t", "test");
  EXPECT_EQ(back.ops[2].group, (std::vector<int>{0, 1}));
  EXPECT_TRUE(back.ops[3].group.empty());
}

TEST(ReplayPlanTrace, PerMiBComputeOnlyBeforeGradients) {
  Trace t;
  t.ops = {op(Coll::Allreduce, 1 << 18, 99), op(Coll::Alltoall, 1 << 18, 99)};  // 1 MiB each
  const ReplayPlan p = plan_trace(t, parse_fusion("none"), parse_compute("us-per-mb:40"));
  EXPECT_EQ(text(p.actions), "C40 L0 L1 W");
}

TEST(ReplayPlanTrace, DroppingMessagesKeepsTheCompute) {
  ReplayPlan p = plan_trace(load_trace(data_path("small.trace.json")), parse_fusion("none"),
                            parse_compute("trace"));
  drop_messages(p, [](const ReplayMessage& m) { return m.coll == Coll::Reduce; });
  EXPECT_EQ(p.messages.size(), 3u);
  EXPECT_EQ(text(p.actions), "C13 L0 L1 W C13 L2 W");
}

TEST(ReplayExport, ExportedTraceReplaysTheSameSchedule) {
  const Model& m = *find_model("gpt2");
  for (const char* fusion : {"none", "ddp"}) {
    const ReplayPlan p =
        plan_model(m, Dtype::Float, parse_fusion(fusion), parse_compute("us-per-mb:30"));
    const Trace t = to_trace(p, "gpt2", "model:gpt2");
    ASSERT_EQ(t.ops.size(), p.messages.size());
    const ReplayPlan back = plan_trace(t, parse_fusion("none"), parse_compute("trace"));
    EXPECT_EQ(text(back.actions), text(p.actions)) << fusion;
    EXPECT_EQ(back.total_bytes(), p.total_bytes());
  }
}

TEST(ReplayBuffers, ElementsPerCollective) {
  ReplayMessage m = ready_at(0);
  m.count = 6;
  // "send/recv" element counts, 4 ranks.
  const auto elements = [&](Coll c) {
    m.coll = c;
    const BufferElements e = buffer_elements(m, 4);
    return std::to_string(e.send) + "/" + std::to_string(e.recv);
  };
  EXPECT_EQ(elements(Coll::Allreduce), "0/6");  // in place
  EXPECT_EQ(elements(Coll::Bcast), "0/6");
  EXPECT_EQ(elements(Coll::Alltoall), "24/24");
  EXPECT_EQ(elements(Coll::Allgather), "6/24");
  EXPECT_EQ(elements(Coll::ReduceScatter), "24/6");
  EXPECT_EQ(elements(Coll::Reduce), "6/6");
}

}  // namespace
}  // namespace cb::dl
