// cb_replay of a count table that covers many training steps (issue 15): the per-step split
// of --steps (the remainder rule, bytes per step) and the buffers shared among messages
// (a message that takes over a buffer waits for its previous message; the memory bound,
// validation batches; no limit on messages in flight otherwise: issue 25).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <stdexcept>

#include "dl_patterns/replay_plan.hpp"
#include "test_util.hpp"

namespace cb::dl {
namespace {

using testing::data_path;

// tests/dl_patterns/data/profile_106_steps.csv: 21 MiB and 14 MiB x 106, four sizes once.
constexpr size_t kBig = 22'020'096, kMid = 14'680'064;
constexpr size_t kOnce[] = {25'165'824, 16'777'216, 3'145'728, 773'280};
constexpr size_t kTableBytes = 3'936'079'008;  // the old refusal: one buffer per message
constexpr size_t kEveryStep = kBig + kMid;
constexpr size_t kFirstStep = kEveryStep + 25'165'824 + 16'777'216 + 3'145'728 + 773'280;

Trace profile() {
  return load_trace(data_path("profile_106_steps.csv"));
}

ReplayPlan plan_of(const Trace& t, bool per_step) {
  ReplayPlan p = plan_trace(t, parse_fusion("none"), parse_compute("none"));
  p.step_per_segment = per_step;
  return p;
}

std::vector<size_t> bytes_per_segment(const ReplayPlan& p) {
  std::vector<size_t> bytes(static_cast<size_t>(p.segments));
  for (const ReplayMessage& m : p.messages) bytes.at(static_cast<size_t>(m.segment)) += m.bytes();
  return bytes;
}

// What the runner relies on: a buffer is big enough for every message that uses it; a
// message that takes over a buffer from an earlier message of its segment first waits for
// that one (waits_for, which itself waited for the one before), which is at least `window`
// launches earlier; with window 0 no two messages of a segment share a buffer, so no launch
// waits at all.
void expect_safe(const BufferPlan& b, const std::vector<size_t>& bytes,
                 const std::vector<int>& segments) {
  ASSERT_EQ(b.buffer_of.size(), bytes.size());
  ASSERT_EQ(b.waits_for.size(), bytes.size());
  if (b.window > 0) {
    EXPECT_LE(b.bytes.size(), b.window);
  }
  std::vector<size_t> last(b.bytes.size(), SIZE_MAX);  // per buffer: its latest message
  size_t waits = 0;
  for (size_t k = 0; k < bytes.size(); ++k) {
    const size_t buf = b.buffer_of[k];
    EXPECT_GE(b.bytes.at(buf), bytes[k]) << "message " << k;
    const size_t j = last.at(buf);
    if (j != SIZE_MAX && segments[j] == segments[k]) {
      EXPECT_GT(b.window, 0u) << "messages " << j << " and " << k << " share without a window";
      EXPECT_GE(k - j, b.window) << "messages " << j << " and " << k;
      EXPECT_EQ(b.waits_for[k], j) << "message " << k << " must wait for " << j;
      ++waits;
    } else {
      EXPECT_EQ(b.waits_for[k], SIZE_MAX) << "message " << k;
    }
    last[buf] = k;
  }
  EXPECT_EQ(b.reuse_waits(), waits);
  const size_t largest = bytes.empty() ? 0 : *std::max_element(bytes.begin(), bytes.end());
  if (b.window > 0) {
    EXPECT_LE(b.total_bytes(), b.window * largest);  // the memory bound
  }
}

void expect_safe(const BufferPlan& b, const ReplayPlan& p) {
  std::vector<size_t> bytes;
  std::vector<int> segments;
  for (const ReplayMessage& m : p.messages) {
    bytes.push_back(buffer_bytes(m, 2));
    segments.push_back(m.segment);
  }
  expect_safe(b, bytes, segments);
}

// ---- the per-step split --------------------------------------------------------------

TEST(ReplaySteps, CountOverStepsEachAndTheRemainderSpreadFromTheFirstStep) {
  for (size_t s = 0; s < 106; ++s) EXPECT_EQ(calls_in_step(106, 106, s), 1u);
  EXPECT_EQ(calls_in_step(1, 106, 0), 1u);  // a size called once: in step 0
  for (size_t s = 1; s < 106; ++s) EXPECT_EQ(calls_in_step(1, 106, s), 0u);
  // 7 over 3: 7/3 = 2 each, the remainder 1 in the first step.
  EXPECT_EQ(calls_in_step(7, 3, 0), 3u);
  EXPECT_EQ(calls_in_step(7, 3, 1), 2u);
  EXPECT_EQ(calls_in_step(7, 3, 2), 2u);
  // 5 over 10: every other step, from step 0.
  for (size_t s = 0; s < 10; ++s) EXPECT_EQ(calls_in_step(5, 10, s), s % 2 == 0 ? 1u : 0u);
  EXPECT_EQ(calls_in_step(5, 10, 10), 0u);  // past the last step
  EXPECT_EQ(calls_in_step(5, 0, 0), 0u);
}

TEST(ReplaySteps, StepsAddUpToTheCountAndAnyRunOfStepsGetsItsShare) {
  for (size_t steps : {1, 2, 3, 7, 10, 106, 1000})
    for (size_t count : {1, 2, 5, 105, 106, 107, 212, 999, 4'194'304}) {
      size_t sum = 0;
      for (size_t s = 0; s < steps; ++s) {
        const size_t c = calls_in_step(count, steps, s);
        EXPECT_GE(c, count / steps) << count << " over " << steps << ", step " << s;
        EXPECT_LE(c, (count + steps - 1) / steps) << count << " over " << steps;
        sum += c;
        // The first s+1 steps hold ceil((s+1) x count / steps): never behind the mean.
        EXPECT_EQ(sum, ((s + 1) * count + steps - 1) / steps);
      }
      EXPECT_EQ(sum, count) << count << " over " << steps;
    }
}

TEST(ReplaySteps, SplitsTheProfileIntoStepsThatAddUpToTheTable) {
  const Trace table = profile();
  ASSERT_EQ(table.ops.size(), 216u);
  const Trace t = split_steps(table, 106);
  EXPECT_EQ(t.iterations(), 106);
  EXPECT_EQ(t.ops.size(), table.ops.size());
  EXPECT_EQ(t.source, table.source);
  const ReplayPlan p = plan_of(t, true);
  EXPECT_EQ(p.total_bytes(), kTableBytes);
  const std::vector<size_t> bytes = bytes_per_segment(p);
  ASSERT_EQ(bytes.size(), 106u);
  EXPECT_EQ(bytes[0], kFirstStep);  // both buckets and the four sizes called once
  for (size_t s = 1; s < 106; ++s) EXPECT_EQ(bytes[s], kEveryStep) << "step " << s;
  // Table order within a step.
  ASSERT_GE(p.messages.size(), 6u);
  EXPECT_EQ(p.messages[0].bytes(), kBig);
  EXPECT_EQ(p.messages[1].bytes(), kMid);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(p.messages[2 + i].bytes(), kOnce[i]);
  EXPECT_EQ(p.messages[6].segment, 1);
}

TEST(ReplaySteps, EachReplayStepIsOneTrainingStep) {
  const ReplayPlan p = plan_of(split_steps(profile(), 106), true);
  const auto steps = replay_steps(p);
  ASSERT_EQ(steps.size(), 106u);
  EXPECT_EQ(steps[0].size(), 7u);  // 6 launches and the wait
  for (const auto& actions : steps) {
    ASSERT_FALSE(actions.empty());
    EXPECT_EQ(actions.back().kind, ReplayAction::Kind::WaitAll);
    EXPECT_EQ(
        std::count_if(actions.begin(), actions.end(),
                      [](const ReplayAction& a) { return a.kind == ReplayAction::Kind::WaitAll; }),
        1);
  }
  EXPECT_EQ(steps[1].front().message, 6u);
  // Without --steps a replay step replays everything, as before.
  const ReplayPlan whole = plan_of(profile(), false);
  const auto one = replay_steps(whole);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].size(), whole.actions.size());
  EXPECT_EQ(whole.total_bytes(), kTableBytes);
}

TEST(ReplaySteps, UnevenCountsSpreadAcrossSteps) {
  Trace t;  // rows of 7 x 100 B and 2 x 8 B over 3 steps: 3+1, 2+1, 2+0
  t.source = "csv:t.csv";
  const auto floats = [](size_t count) {
    TraceOp op;
    op.count = count;
    return op;
  };
  t.ops.insert(t.ops.end(), 7, floats(25));
  t.ops.insert(t.ops.end(), 2, floats(2));
  const Trace s = split_steps(t, 3);
  std::vector<std::string> got;
  for (const TraceOp& op : s.ops)
    got.push_back(std::to_string(op.iteration) + ":" + std::to_string(op.bytes()));
  EXPECT_EQ(got, (std::vector<std::string>{"0:100", "0:100", "0:100", "0:8", "1:100", "1:100",
                                           "1:8", "2:100", "2:100"}));
  EXPECT_EQ(split_steps(t, 1).ops, t.ops);
}

TEST(ReplaySteps, RefusesWhatCannotBeSplit) {
  const Trace t = profile();
  EXPECT_THROW(split_steps(t, 0), std::invalid_argument);
  try {
    split_steps(t, 107);  // step 106 would be empty
    ADD_FAILURE() << "107 steps of a table whose largest count is 106";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT_MESSAGE(e.what(), "more steps than the table's largest count (106)");
  }
  EXPECT_NO_THROW(split_steps(t, 106));
  const Trace two = load_trace(data_path("small.trace.json"));  // 2 steps already
  EXPECT_THROW(split_steps(two, 2), std::invalid_argument);
}

// ---- buffers shared among messages not in flight together -----------------------------

TEST(ReplayBufferSharing, EveryMessageOfASmallSegmentHasItsOwnBuffer) {
  const BufferPlan b = share_buffers({5, 3, 8}, {0, 0, 0});
  EXPECT_EQ(b.bytes, (std::vector<size_t>{5, 3, 8}));
  EXPECT_EQ(b.buffer_of, (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(b.total_bytes(), 16u);
  EXPECT_EQ(b.largest_bytes(), 8u);
  EXPECT_EQ(b.sizes_text(), "1 x 8 B + 1 x 5 B + 1 x 3 B");
}

TEST(ReplayBufferSharing, ReusesABufferOnlyAWindowLaterAndWaitsForItsPreviousMessage) {
  const std::vector<size_t> bytes(40, 10);
  const std::vector<int> segments(40, 0);
  const BufferPlan b = share_buffers(bytes, segments, 16);
  EXPECT_EQ(b.window, 16u);
  EXPECT_EQ(b.bytes.size(), 16u);
  EXPECT_EQ(b.total_bytes(), 160u);
  for (size_t k = 0; k < 16; ++k) EXPECT_EQ(b.waits_for[k], SIZE_MAX);
  for (size_t k = 16; k < 40; ++k) {
    EXPECT_EQ(b.buffer_of[k], b.buffer_of[k - 16]);
    EXPECT_EQ(b.waits_for[k], k - 16);  // only that one, not every message before it
  }
  EXPECT_EQ(b.reuse_waits(), 24u);
  expect_safe(b, bytes, segments);
  EXPECT_EQ(b.sizes_text(), "16 x 10 B");
}

TEST(ReplayBufferSharing, WithoutAWindowEveryMessageOfASegmentHasItsOwnBuffer) {
  const std::vector<size_t> bytes(40, 10);
  std::vector<int> segments(40, 0);
  const BufferPlan b = share_buffers(bytes, segments);  // window 0: the default
  EXPECT_EQ(b.window, 0u);
  EXPECT_EQ(b.bytes.size(), 40u);
  EXPECT_EQ(b.reuse_waits(), 0u);
  expect_safe(b, bytes, segments);
  // A second segment of 40 reuses them all, and waits for nothing (the first ended).
  segments.insert(segments.end(), 40, 1);
  const std::vector<size_t> twice(80, 10);
  const BufferPlan c = share_buffers(twice, segments);
  EXPECT_EQ(c.bytes.size(), 40u);
  EXPECT_EQ(c.reuse_waits(), 0u);
  expect_safe(c, twice, segments);
}

// 40 collectives ready at once (a trace without compute): every one is launched before
// anything is waited for, which the old 16-in-flight window did not allow. The step runner
// waits before a launch only for the plan's waits_for, so the plan says what it does: the
// simulation below follows its rules (replay_step.cpp: launch_message(), wait_all()).
TEST(ReplayBufferSharing, MoreThanSixteenReadyAtOnceAllLaunchBeforeAnyWait) {
  Trace t;
  t.name = "forty";
  for (int k = 0; k < 40; ++k)
    t.ops.push_back({Coll::Allreduce, 1024, Dtype::Float, Op::Max, 0, "b" + std::to_string(k)});
  const ReplayPlan p = plan_trace(t, parse_fusion("none"), parse_compute("none"));
  ASSERT_EQ(p.messages.size(), 40u);
  const BufferPlan b = plan_buffers(p, 2, size_t{1} << 30);
  EXPECT_EQ(b.window, 0u);
  EXPECT_EQ(b.bytes.size(), 40u);
  size_t in_flight = 0, most = 0, launched = 0;
  for (const ReplayAction& a : p.actions) {
    if (a.kind == ReplayAction::Kind::Launch) {
      EXPECT_EQ(b.waits_for.at(a.message), SIZE_MAX) << "launch " << a.message << " waits";
      most = std::max(most, ++in_flight);
      ++launched;
    }
    if (a.kind == ReplayAction::Kind::WaitAll) {
      EXPECT_EQ(launched, 40u) << "a wait before every message was launched";
      in_flight = 0;
    }
    EXPECT_NE(a.kind, ReplayAction::Kind::Wait);
  }
  EXPECT_EQ(most, 40u);

  // A limit too small for 40 buffers: shared 16 launches apart, message k waiting for k - 16
  // only (what is in flight is then bounded by the buffers, and the record says so).
  const BufferPlan s = plan_buffers(p, 2, 20 * 4096);
  EXPECT_EQ(s.window, kShareWindow);
  EXPECT_EQ(s.bytes.size(), 16u);
  EXPECT_EQ(s.reuse_waits(), 24u);
  EXPECT_EQ(s.waits_for.at(39), 23u);
}

TEST(ReplayBufferSharing, ANewSegmentReusesEveryBuffer) {
  // The segment ends by waiting for all: message 2 may take message 0's or 1's buffer.
  const BufferPlan b = share_buffers({8, 4, 4, 8}, {0, 0, 1, 1});
  EXPECT_EQ(b.bytes, (std::vector<size_t>{8, 4}));
  EXPECT_EQ(b.buffer_of, (std::vector<size_t>{0, 1, 1, 0}));  // smallest free that fits
}

TEST(ReplayBufferSharing, GrowsTheLargestFreeBufferRatherThanAddingOne) {
  // Window 2: message 2 may use message 0's buffer (grown from 4 to 6), not a new one.
  const BufferPlan b = share_buffers({4, 5, 6, 1}, {0, 0, 0, 0}, 2);
  EXPECT_EQ(b.bytes, (std::vector<size_t>{6, 5}));
  EXPECT_EQ(b.buffer_of, (std::vector<size_t>{0, 1, 0, 1}));
  expect_safe(b, {4, 5, 6, 1}, {0, 0, 0, 0});
}

TEST(ReplayBufferSharing, MixedSizesStayWithinTheBound) {
  std::vector<size_t> bytes;
  std::vector<int> segments;
  for (size_t k = 0; k < 500; ++k) {  // a deterministic jumble of sizes and segments
    bytes.push_back(1 + (k * 7919) % 1000);
    segments.push_back(static_cast<int>(k / 90));
  }
  for (size_t window : {1, 2, 5, 16}) {
    const BufferPlan b = share_buffers(bytes, segments, window);
    expect_safe(b, bytes, segments);
  }
}

TEST(ReplayBufferSharing, TheProfileFitsTheDefaultLimit) {
  // Without --steps: 216 messages in one step. Each its own buffer would be 3936079008 B,
  // above the 1 GiB default: shared 16 launches apart (a launch waits for its buffer).
  const ReplayPlan whole = plan_of(profile(), false);
  EXPECT_EQ(share_buffers(whole, 2).total_bytes(), kTableBytes);
  const BufferPlan b = plan_buffers(whole, 2, size_t{1} << 30);
  expect_safe(b, whole);
  EXPECT_EQ(b.window, kShareWindow);
  EXPECT_EQ(b.bytes.size(), kShareWindow);
  EXPECT_EQ(b.reuse_waits(), 216u - 16u);
  EXPECT_EQ(b.total_bytes(), 15 * kBig + kOnce[0]);  // 339 MiB: 15 x 21 MiB, one grown to 24
  EXPECT_LE(b.total_bytes(), size_t{1} << 30);
  EXPECT_EQ(b.sizes_text(), "1 x 25165824 B + 15 x 22020096 B");

  // --steps 106: one training step's messages at a time, 6 at most, each its own buffer.
  const ReplayPlan steps = plan_of(split_steps(profile(), 106), true);
  const BufferPlan s = plan_buffers(steps, 2, size_t{1} << 30);
  expect_safe(s, steps);
  EXPECT_EQ(s.window, 0u);
  EXPECT_EQ(s.reuse_waits(), 0u);
  EXPECT_EQ(s.bytes.size(), 6u);
  EXPECT_EQ(s.total_bytes(), kFirstStep);  // 78.7 MiB: the largest step
  for (size_t k = 6; k < steps.messages.size(); ++k)
    EXPECT_EQ(s.bytes[s.buffer_of[k]], steps.messages[k].bytes()) << "an exact fit";
}

TEST(ReplayBufferSharing, BufferBytesCountSendAndReceiveParts) {
  ReplayMessage m;
  m.count = 6;
  m.coll = Coll::Allreduce;  // in place
  EXPECT_EQ(buffer_bytes(m, 4), 24u);
  m.coll = Coll::Alltoall;  // 24 elements each way
  EXPECT_EQ(buffer_bytes(m, 4), 192u);
}

TEST(ReplayBufferSharing, ValidationBatchesNeverHoldABufferTwice) {
  for (bool per_step : {false, true}) {
    const Trace t = per_step ? split_steps(profile(), 106) : profile();
    const ReplayPlan p = plan_of(t, per_step);
    const BufferPlan b = plan_buffers(p, 2, size_t{1} << 30);
    const auto batches = validation_batches(p, b);
    size_t next = 0;
    for (const auto& [first, end] : batches) {
      EXPECT_EQ(first, next);  // in order, covering every message
      EXPECT_LT(first, end);
      EXPECT_LE(end - first, kShareWindow);
      std::set<size_t> used;
      for (size_t k = first; k < end; ++k) {
        EXPECT_EQ(p.messages[k].segment, p.messages[first].segment);
        EXPECT_TRUE(used.insert(b.buffer_of[k]).second) << "buffer reused within a batch";
      }
      next = end;
    }
    EXPECT_EQ(next, p.messages.size());
    EXPECT_EQ(batches.size(), per_step ? 106u : 14u);  // 216 = 13 x 16 + 8
  }
}

}  // namespace
}  // namespace cb::dl
