// --parallel fsdp | zero1 | zero2: the plans of every built-in model add up to exactly the
// model's parameters per step, with the stated padding, and issue their collectives in the
// order FSDP (prefetch) and DeepSpeed ZeRO do.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <stdexcept>

#include "dl_patterns/parallel.hpp"

namespace cb::dl {
namespace {

using Kind = ReplayAction::Kind;

const int kRanks[] = {2, 3, 4, 8};

size_t padded(size_t numel, int n) {  // the stated padding: up to a multiple of n
  return (numel + static_cast<size_t>(n) - 1) / static_cast<size_t>(n) * static_cast<size_t>(n);
}

// Elements of a collective pass over all ranks: per-rank count x n.
size_t total_over_ranks(const ReplayPlan& p, Coll coll, const std::string& tag, int n) {
  size_t sum = 0;
  for (const ReplayMessage& m : p.messages)
    if (m.coll == coll && m.name.find(tag) != std::string::npos)
      sum += m.count * static_cast<size_t>(n);
  return sum;
}

TEST(ParallelSpec, ParsesModesAndBuckets) {
  EXPECT_EQ(parse_parallel("ddp").mode, Parallel::Ddp);
  EXPECT_EQ(parse_parallel("fsdp").mode, Parallel::Fsdp);
  EXPECT_EQ(parse_parallel("zero1").bucket_elements, kZeroDefaultBucketElements);
  EXPECT_EQ(parse_parallel("zero2:5e8").bucket_elements, kDeepSpeedBucketElements);
  EXPECT_EQ(describe(parse_parallel("zero2:1000")), "zero2:1000");
  EXPECT_EQ(describe(parse_parallel("fsdp")), "fsdp");
  for (const char* bad : {"", "tp", "fsdp:3", "zero2:", "zero2:0", "zero2:1.5", "zero1:x"})
    EXPECT_THROW(parse_parallel(bad), std::invalid_argument) << bad;
}

TEST(FsdpUnits, OneUnitPerLayerGroupPlusRoot) {
  const std::map<std::string, size_t> expected = {
      {"gpt2", 13}, {"bert-base", 13}, {"resnet50", 17}, {"vgg16", 16}};
  for (const std::string& name : model_names()) {
    const Model& m = *find_model(name);
    const std::vector<FsdpUnit> units = fsdp_units(m);
    EXPECT_EQ(units.size(), expected.at(name)) << name;
    size_t numel = 0, tensors = 0;
    for (const FsdpUnit& u : units) {
      numel += u.numel;
      tensors += u.tensors;
    }
    EXPECT_EQ(numel, m.total_params()) << name;
    EXPECT_EQ(tensors, m.tensors.size()) << name;
  }
  const std::vector<FsdpUnit> gpt2 = fsdp_units(*find_model("gpt2"));
  EXPECT_EQ(gpt2[0].name, "root");
  EXPECT_EQ(gpt2[0].tensors, 4u);  // wte, wpe, ln_f weight and bias
  EXPECT_EQ(gpt2[1].name, "transformer.h.0");
  EXPECT_EQ(gpt2[12].name, "transformer.h.11");
  EXPECT_EQ(gpt2[1].numel, 7087872u);  // one GPT-2 block
  EXPECT_EQ(fsdp_units(*find_model("resnet50"))[1].name, "layer1.0");
  EXPECT_EQ(fsdp_units(*find_model("vgg16"))[0].name, "features.0");
}

TEST(FsdpPlan, GathersAndScattersExactlyTheParametersPerStep) {
  for (const std::string& name : model_names())
    for (int n : kRanks) {
      SCOPED_TRACE(name + " n=" + std::to_string(n));
      const Model& m = *find_model(name);
      const std::vector<FsdpUnit> units = fsdp_units(m);
      const ReplayPlan p = plan_parallel(m, Dtype::Float, {}, parse_parallel("fsdp"),
                                         parse_compute("us-per-mb:100"), n);
      size_t padded_total = 0;
      for (const FsdpUnit& u : units) padded_total += padded(u.numel, n);
      EXPECT_LT(padded_total - m.total_params(), units.size() * static_cast<size_t>(n));
      // Each allgather pass (forward, backward) and the reduce_scatter pass: the parameters.
      EXPECT_EQ(total_over_ranks(p, Coll::Allgather, "fwd_allgather", n), padded_total);
      EXPECT_EQ(total_over_ranks(p, Coll::Allgather, "bwd_allgather", n), padded_total);
      EXPECT_EQ(total_over_ranks(p, Coll::ReduceScatter, "reduce_scatter", n), padded_total);
      // Two allgathers and one reduce_scatter per unit, of the unit's shard.
      ASSERT_EQ(p.messages.size(), 3 * units.size());
      std::map<std::string, std::pair<int, int>> per_unit;  // unit -> (allgathers, scatters)
      for (const ReplayMessage& msg : p.messages) {
        const std::string unit = msg.name.substr(msg.name.find('[') + 1);
        (msg.coll == Coll::Allgather ? per_unit[unit].first : per_unit[unit].second) += 1;
        EXPECT_EQ(msg.dtype, Dtype::Float);
        EXPECT_EQ(msg.bytes() * static_cast<size_t>(n) % (4 * static_cast<size_t>(n)), 0u);
      }
      ASSERT_EQ(per_unit.size(), units.size());
      for (const auto& [unit, counts] : per_unit) {
        EXPECT_EQ(counts.first, 2) << unit;
        EXPECT_EQ(counts.second, 1) << unit;
      }
      for (size_t k = 0; k < units.size(); ++k)
        EXPECT_EQ(p.messages[k].count, (units[k].numel + n - 1) / static_cast<size_t>(n));
    }
}

// Every action's position; Launch, Wait and Compute in order as FSDP issues them.
TEST(FsdpPlan, GathersEachUnitBeforeItsComputeAndPrefetchesTheNext) {
  const Model& m = *find_model("gpt2");
  const size_t units = fsdp_units(m).size();
  const ReplayPlan p =
      plan_parallel(m, Dtype::Float, {}, parse_parallel("fsdp"), parse_compute("us-per-mb:100"), 4);
  ASSERT_TRUE(p.dependencies);
  std::vector<size_t> launched_at(p.messages.size(), SIZE_MAX),
      waited_at(p.messages.size(), SIZE_MAX);
  std::vector<size_t> computes;  // action index of each Compute: forward units, then backward
  for (size_t i = 0; i < p.actions.size(); ++i) {
    const ReplayAction& a = p.actions[i];
    if (a.kind == Kind::Launch) launched_at[a.message] = i;
    if (a.kind == Kind::Wait) waited_at[a.message] = i;
    if (a.kind == Kind::Compute) computes.push_back(i);
  }
  ASSERT_EQ(computes.size(), 2 * units);
  EXPECT_EQ(p.actions.back().kind, Kind::WaitAll);
  const std::vector<FsdpUnit> unit_list = fsdp_units(m);
  const auto index_of = [&](const std::string& what, size_t k) {
    const std::string name = "fsdp." + what + "[" + unit_list[k].name + "]";
    for (size_t i = 0; i < p.messages.size(); ++i)
      if (p.messages[i].name == name) return i;
    ADD_FAILURE() << name << " missing";
    return size_t{0};
  };
  const auto fwd = [&](size_t k) { return index_of("fwd_allgather", k); };
  const auto bwd = [&](size_t k) { return index_of("bwd_allgather", k); };
  const auto rs = [&](size_t k) { return index_of("reduce_scatter", k); };
  // Launch order: forward allgathers of units 0..U-1, then the backward allgather of U-1,
  // then per unit k = U-1..0 the prefetch of k-1 and the reduce_scatter of k.
  EXPECT_EQ(bwd(units - 1), units);
  EXPECT_EQ(rs(0), p.messages.size() - 1);
  for (size_t k = 0; k < units; ++k) {
    SCOPED_TRACE("unit " + std::to_string(k));
    EXPECT_EQ(fwd(k), k);
    EXPECT_EQ(p.messages[fwd(k)].coll, Coll::Allgather);
    EXPECT_EQ(p.messages[bwd(k)].coll, Coll::Allgather);
    if (k > 0) {
      EXPECT_EQ(bwd(k - 1) + 1, rs(k));  // prefetch of k-1, then unit k's reduce_scatter
    }
    EXPECT_EQ(p.messages[bwd(k)].count, p.messages[fwd(k)].count);
    const size_t fwd_compute = computes[k], bwd_compute = computes[2 * units - 1 - k];
    // Gathered (launched and waited for) before the unit's forward and backward compute.
    EXPECT_LT(waited_at[fwd(k)], fwd_compute);
    EXPECT_LT(launched_at[fwd(k)], waited_at[fwd(k)]);
    EXPECT_LT(waited_at[bwd(k)], bwd_compute);
    EXPECT_GT(launched_at[bwd(k)], computes[units - 1]);  // after the whole forward
    // Prefetch: the next unit's allgather is issued before this unit's compute.
    if (k + 1 < units) {
      EXPECT_LT(launched_at[fwd(k + 1)], fwd_compute);
      EXPECT_GT(waited_at[fwd(k + 1)], fwd_compute);
    }
    if (k > 0) {
      EXPECT_LT(launched_at[bwd(k - 1)], bwd_compute);
      EXPECT_GT(waited_at[bwd(k - 1)], bwd_compute);
    }
    // The unit's gradients are reduce_scattered after its backward compute.
    const size_t r = rs(k);
    ASSERT_LT(r, p.messages.size());
    EXPECT_EQ(p.messages[r].coll, Coll::ReduceScatter);
    EXPECT_GT(launched_at[r], bwd_compute);
  }
  // Ready times follow the compute clock: forward 0.5 x backward.
  EXPECT_NEAR(p.compute_us(), 1.5 * 100 * m.total_bytes() / double(kMiB), 1e-6 * p.compute_us());
  for (size_t k = 1; k < p.messages.size(); ++k)
    EXPECT_GE(p.messages[k].ready_us, p.messages[k - 1].ready_us);
}

TEST(FsdpPlan, KeepsItsWaitsWithoutComputeAndWhenMessagesAreDropped) {
  const Model& m = *find_model("resnet50");
  ReplayPlan p =
      plan_parallel(m, Dtype::Float, {}, parse_parallel("fsdp"), parse_compute("none"), 2);
  EXPECT_EQ(p.compute_us(), 0);
  const auto waits = [](const std::vector<ReplayAction>& actions) {
    size_t w = 0;
    for (const ReplayAction& a : actions) w += a.kind == Kind::Wait;
    return w;
  };
  const size_t units = fsdp_units(m).size();
  EXPECT_EQ(waits(p.actions), 2 * units);
  EXPECT_EQ(waits(without_compute(p.actions)), 2 * units);
  drop_messages(p, [](const ReplayMessage& msg) { return msg.coll == Coll::ReduceScatter; });
  EXPECT_EQ(p.messages.size(), 2 * units);
  EXPECT_EQ(waits(p.actions), 2 * units);
  for (const ReplayAction& a : p.actions)
    if (a.kind == Kind::Launch || a.kind == Kind::Wait) {
      ASSERT_LT(a.message, p.messages.size());
      EXPECT_EQ(p.messages[a.message].coll, Coll::Allgather);
    }
}

TEST(ZeroPlan, ScattersAndGathersExactlyTheParametersPerStep) {
  for (const char* mode : {"zero1", "zero2", "zero2:5e8", "zero1:1000000"})
    for (const std::string& name : model_names())
      for (int n : kRanks) {
        SCOPED_TRACE(std::string(mode) + " " + name + " n=" + std::to_string(n));
        const Model& m = *find_model(name);
        const ParallelConfig config = parse_parallel(mode);
        const ReplayPlan p =
            plan_parallel(m, Dtype::Half, {}, config, parse_compute("us-per-mb:100"), n);
        const auto buckets = zero_buckets(backward_order(m), config.bucket_elements);
        const std::vector<Gradient> grads = backward_order(m);
        size_t padded_total = 0;
        for (const auto& [first, end] : buckets) {
          size_t numel = 0;
          for (size_t i = first; i < end; ++i) numel += grads[i].count;
          EXPECT_TRUE(numel <= config.bucket_elements || end - first == 1);
          padded_total += padded(numel, n);
        }
        EXPECT_LT(padded_total - m.total_params(), buckets.size() * static_cast<size_t>(n));
        EXPECT_EQ(total_over_ranks(p, Coll::ReduceScatter, "reduce_scatter", n), padded_total);
        EXPECT_EQ(total_over_ranks(p, Coll::Allgather, "allgather", n), padded_total);
        ASSERT_EQ(p.messages.size(), 2 * buckets.size());
        // Reduce_scatters in backward (segment 0), allgathers after the step (segment 1).
        for (size_t b = 0; b < buckets.size(); ++b) {
          EXPECT_EQ(p.messages[b].coll, Coll::ReduceScatter);
          EXPECT_EQ(p.messages[b].segment, 0);
          EXPECT_EQ(p.messages[b].dtype, Dtype::Half);
          EXPECT_EQ(p.messages[buckets.size() + b].coll, Coll::Allgather);
          EXPECT_EQ(p.messages[buckets.size() + b].segment, 1);
        }
        EXPECT_EQ(p.segments, 2);
        size_t wait_alls = 0;
        for (const ReplayAction& a : p.actions) wait_alls += a.kind == Kind::WaitAll;
        EXPECT_EQ(wait_alls, 2u);
      }
}

TEST(ZeroPlan, Zero2ReducesDuringBackwardZero1After) {
  const Model& m = *find_model("gpt2");
  const ComputeSpec compute = parse_compute("us-per-mb:100");
  const ReplayPlan z2 = plan_parallel(m, Dtype::Float, {}, parse_parallel("zero2"), compute, 2);
  const ReplayPlan z1 = plan_parallel(m, Dtype::Float, {}, parse_parallel("zero1"), compute, 2);
  const double end = z2.segment_end_us[0];
  ASSERT_GT(end, 0);
  size_t early = 0, scatters = 0;
  for (const ReplayMessage& msg : z2.messages)
    if (msg.coll == Coll::ReduceScatter) {
      ++scatters;
      early += msg.ready_us < end;
    }
  EXPECT_GE(scatters, 4u);  // GPT-2 in 2.5e7-element buckets
  // A bucket is reduced when the first gradient that does not fit is ready (GPT-2's last
  // one, wte, makes the bucket before it wait until backward ends), the last at the end.
  const std::vector<Gradient> grads = backward_order(m, 100);
  const auto buckets = zero_buckets(grads, kZeroDefaultBucketElements);
  ASSERT_EQ(buckets.size(), scatters);
  for (size_t b = 0; b + 1 < buckets.size(); ++b)
    EXPECT_DOUBLE_EQ(z2.messages[b].ready_us, grads[buckets[b].second].ready_us);
  EXPECT_DOUBLE_EQ(z2.messages[scatters - 1].ready_us, end);
  EXPECT_GE(early, scatters - 2);
  for (const ReplayMessage& msg : z1.messages) EXPECT_DOUBLE_EQ(msg.ready_us, end);
  EXPECT_DOUBLE_EQ(z1.compute_us(), z2.compute_us());
  // DeepSpeed's default bucket holds all of GPT-2: one reduce_scatter, one allgather.
  EXPECT_EQ(
      plan_parallel(m, Dtype::Float, {}, parse_parallel("zero2:5e8"), compute, 2).messages.size(),
      2u);
}

TEST(ParallelPlan, DdpIsPlanModel) {
  const Model& m = *find_model("resnet50");
  const ReplayPlan a = plan_parallel(m, Dtype::Float, parse_fusion("ddp"), parse_parallel("ddp"),
                                     parse_compute("none"), 4);
  const ReplayPlan b = plan_model(m, Dtype::Float, parse_fusion("ddp"), parse_compute("none"));
  ASSERT_EQ(a.messages.size(), b.messages.size());
  EXPECT_EQ(a.total_bytes(), b.total_bytes());
  EXPECT_FALSE(a.dependencies);
  EXPECT_THROW(plan_parallel(m, Dtype::Float, {}, parse_parallel("fsdp"), {}, 0),
               std::invalid_argument);
}

}  // namespace
}  // namespace cb::dl

namespace cb::dl {
namespace {

// A gathered unit's buffer passes on once its Wait has run: FSDP's buffers fit the default
// 1 GiB limit for GPT-2 at 2 ranks, and no buffer is shared by messages in flight together
// (a launch waits only for the plan's waits_for: replay_step.cpp).
TEST(FsdpPlan, BuffersPassOnAfterTheirWait) {
  const ReplayPlan p = plan_parallel(*find_model("gpt2"), Dtype::Float, {}, parse_parallel("fsdp"),
                                     parse_compute("trace"), 2);
  const BufferPlan b = plan_buffers(p, 2, size_t{1} << 30);
  EXPECT_LT(b.total_bytes(), size_t{1} << 30);
  std::vector<bool> open(p.messages.size());
  for (const ReplayAction& a : p.actions) {
    if (a.kind == ReplayAction::Kind::Wait) open[a.message] = false;
    if (a.kind != ReplayAction::Kind::Launch) continue;
    if (const size_t before = b.waits_for.at(a.message); before != SIZE_MAX) open[before] = false;
    for (size_t j = 0; j < a.message; ++j)
      EXPECT_FALSE(open[j] && b.buffer_of[j] == b.buffer_of[a.message]) << j << " " << a.message;
    open[a.message] = true;
  }
}

}  // namespace
}  // namespace cb::dl
