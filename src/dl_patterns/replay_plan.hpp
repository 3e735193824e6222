// What cb_replay does in one training step, worked out before anything runs: the
// collectives (fused as the chosen framework would), when each becomes ready on the
// emulated backward pass, and the resulting sequence of compute, idle, launch and wait
// actions. Pure logic (no MPI), so the step accounting is unit-tested; docs/replay.md
// describes the semantics.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/types.hpp"
#include "core/vcounts.hpp"
#include "dl_patterns/fusion.hpp"
#include "dl_patterns/models.hpp"
#include "dl_patterns/trace.hpp"

namespace cb::dl {

// --compute trace with --model: backward compute per MiB of gradient. Roughly an
// A100-class GPU at batch 32 (ResNet-50's 97.5 MiB of gradients in ~20 ms of backward).
inline constexpr double kModelDefaultUsPerMiB = 200;
// Compute runs in slices of at most this length; in-flight collectives are tested after
// each slice (what Horovod's background thread or a progress thread would do).
inline constexpr double kProgressSliceUs = 50;

// Messages in flight are not limited: each is started once ready, as DDP starts a bucket's
// allreduce (no cap on buckets in flight). Only a message that takes over the buffer of an
// earlier message of the same step waits, before it starts, for that message to complete;
// buffers are shared within a step only when each message's own buffer would exceed -M,
// and then a buffer passes on only kShareWindow or more launches later (share_buffers()).
inline constexpr size_t kShareWindow = 16;

// --compute none | trace | us-per-mb:X
struct ComputeSpec {
  enum class Mode { None, Trace, PerMiB };
  Mode mode = Mode::None;
  double us_per_mib = 0;  // PerMiB only
};
// Throws std::invalid_argument naming the problem.
ComputeSpec parse_compute(std::string_view spec);
std::string describe(const ComputeSpec& spec);

// One collective of the replayed step (a fused message is one collective).
struct ReplayMessage {
  Coll coll = Coll::Allreduce;
  size_t count = 0;  // as TraceOp::count
  Dtype dtype = Dtype::Float;
  Op op = Op::Sum;
  int root = 0;
  std::string name;
  size_t record = 0;    // index of its first trace op or gradient tensor (for messages)
  size_t members = 1;   // trace ops or tensors fused into it
  double ready_us = 0;  // on the compute clock; launches are in non-decreasing ready order
  int segment = 0;      // trace step: every message of a segment completes before the next
  // Alltoallv (MoE token exchanges): elements each rank sends each rank; `count` is the mean
  // per peer of rank 0's row. Shared: the combine and backward exchanges reuse a matrix.
  std::shared_ptr<const CountMatrix> counts;
  // The process group it runs on: an index into ReplayPlan::groups, or -1 for every rank.
  int group = -1;

  size_t bytes() const { return count * dtype_size(dtype); }
};

struct ReplayAction {
  // Wait: until one launched message completes (FSDP: compute needs the gathered unit).
  enum class Kind { Compute, Idle, Launch, WaitAll, Wait };
  Kind kind = Kind::Compute;
  double us = 0;       // Compute: emulated backward compute; Idle: waiting, e.g. a Horovod cycle
  size_t message = 0;  // Launch, Wait: index into ReplayPlan::messages
};

struct ReplayPlan {
  std::vector<ReplayMessage> messages;  // launch order
  std::vector<ReplayAction> actions;    // every segment, each ending with WaitAll
  std::vector<double> segment_end_us;   // compute clock at the end of each segment
  int segments = 1;
  // --steps N: the segments are the N training steps of a count table, and each replay step
  // replays one of them in turn (replay_steps()). Otherwise a replay step replays them all.
  bool step_per_segment = false;
  // The actions were built by the planner (--parallel fsdp: Wait actions between launches)
  // rather than by schedule() from the messages' ready times: drop_messages() keeps them.
  bool dependencies = false;
  // Process groups smaller than the job (a trace's TraceOp::group): ranks of the job,
  // increasing, each distinct group once, in order of first use.
  std::vector<std::vector<int>> groups;

  // Ranks a message runs on: its group's size, or `nranks`.
  int ranks_of(const ReplayMessage& m, int nranks) const {
    return m.group < 0 ? nranks : static_cast<int>(groups.at(static_cast<size_t>(m.group)).size());
  }
  double compute_us() const;  // sum of Compute actions
  double idle_us() const;     // sum of Idle actions
  size_t total_bytes() const;
};

// Gradients of `model` (every tensor converted to `dtype`), fused by `fusion`, ready as
// `compute` says (trace: kModelDefaultUsPerMiB). One segment.
ReplayPlan plan_model(const Model& model, Dtype dtype, const FusionConfig& fusion,
                      const ComputeSpec& compute);

// Sum allreduces of a trace are gradients, ready when the compute before them (compute_us,
// or us-per-mb of their size) has run; they are fused within runs between other
// collectives, step boundaries and changes of process group. Every other op is replayed as
// it is, in order. An op's group (TraceOp::group, unless it holds every rank of the trace's
// world_size) becomes the message's.
ReplayPlan plan_trace(const Trace& trace, const FusionConfig& fusion, const ComputeSpec& compute);

// Actions of one step from messages and segment ends: compute until each message is
// ready, idle past the compute's end when a launch comes later (Horovod's cycle), launch,
// and wait for everything at each segment end.
std::vector<ReplayAction> schedule(const std::vector<ReplayMessage>& messages,
                                   const std::vector<double>& segment_end_us);

// The same step with no compute and no idling: the pure communication step.
std::vector<ReplayAction> without_compute(const std::vector<ReplayAction>& actions);

// The action lists of the replay steps, cycled through by the timed (and warmup) steps:
// one list (plan.actions: every segment) or, with step_per_segment, one per segment, each
// ending with its WaitAll.
std::vector<std::vector<ReplayAction>> replay_steps(const ReplayPlan& plan);

// ---- --steps N: a count table that covers N training steps ----------------------------

// Calls that training step `step` (0-based) of `steps` replays of a table row called `count`
// times: ceil((step+1) x count / steps) - ceil(step x count / steps). That is count/steps
// each, the remainder spread evenly from the first step (a row with count < steps is called
// in steps 0, ~steps/count, ...); the `steps` steps add up to `count` exactly.
size_t calls_in_step(size_t count, size_t steps, size_t step);

// A count table (one step, as import_csv() writes it: each row is a run of equal consecutive
// ops) split into `steps` training steps: ops of step s have iteration s and are
// calls_in_step() of every row, in table order. Throws std::invalid_argument when steps is
// 0, when the trace already has several steps, or when steps exceeds the largest count (the
// last step would replay nothing).
Trace split_steps(const Trace& table, size_t steps);

// Removes the messages `drop` selects (and their launches and waits); compute stays as it
// was. Actions are rescheduled, or with plan.dependencies kept, their indices renumbered.
void drop_messages(ReplayPlan& plan, const std::function<bool(const ReplayMessage&)>& drop);

// The plan's messages as a trace (compute_us = time since the previous launch was ready),
// for --export-trace: one op per tensor without fusion, one per fused message otherwise.
Trace to_trace(const ReplayPlan& plan, std::string name, std::string source);

// Elements of the send and receive buffers of a message over `nranks` ranks. Allreduce
// runs in place (send 0), as DDP and Horovod do; bcast has one buffer; an alltoallv holds
// the largest send and receive totals of any rank (the same buffer plan on every rank).
struct BufferElements {
  size_t send = 0, recv = 0;
};
BufferElements buffer_elements(const ReplayMessage& m, int nranks);
// Bytes of buffer one message needs (send and receive parts together).
size_t buffer_bytes(const ReplayMessage& m, int nranks);

// Buffers shared among messages. Message k may reuse the buffer of message j < k when j
// is in an earlier segment (a segment ends by waiting for all), when a Wait action for j
// comes before k's launch (`done_before`), or, with window > 0, when j is at least `window`
// launches earlier in the same segment: then k waits, before it starts, until j has
// completed (waits_for). window 0: no buffer passes on within a segment, so nothing waits
// and every message of a segment can be in flight at once. Assigned in launch order: the
// smallest free buffer that fits, else the largest free one grown to fit, else a new one.
// With window W > 0 there are at most W buffers, none larger than the largest message:
// memory is at most W x the largest message, whatever the number of messages.
struct BufferPlan {
  std::vector<size_t> bytes;      // per buffer
  std::vector<size_t> buffer_of;  // per message: the buffer it uses
  // Per message: the earlier message of its segment that used its buffer and is not known
  // to be complete when it launches (it must be waited for first), or SIZE_MAX.
  std::vector<size_t> waits_for;
  size_t window = 0;

  size_t total_bytes() const;
  size_t largest_bytes() const;
  size_t reuse_waits() const;  // messages with a waits_for
  // "2 x 22020096 B + 1 x 14680064 B": the buffers by size, largest first.
  std::string sizes_text() const;
};
// `done_before` (optional, per message): message j is also complete once message
// done_before[j] launches (a Wait action for j precedes that launch: --parallel fsdp).
BufferPlan share_buffers(const std::vector<size_t>& message_bytes, const std::vector<int>& segments,
                         size_t window = 0, const std::vector<size_t>& done_before = {});
BufferPlan share_buffers(const ReplayPlan& plan, int nranks, size_t window = 0);
// What cb_replay allocates: a buffer per message of a segment (window 0) when that fits in
// `limit` bytes, else buffers shared with kShareWindow (which may still exceed the limit:
// the caller refuses it).
BufferPlan plan_buffers(const ReplayPlan& plan, int nranks, size_t limit);

// Validation batches: [first, end) ranges of consecutive messages of one segment that share
// no buffer (the whole segment with window 0; else at most `window` each), in order,
// covering every message. Each batch is
// filled, run and checked before the next reuses its buffers.
std::vector<std::pair<size_t, size_t>> validation_batches(const ReplayPlan& plan,
                                                          const BufferPlan& buffers);
// Gradients are reduced in place (DDP, Horovod): allreduces are replayed in place.
inline bool replayed_in_place(Coll c) {
  return c == Coll::Allreduce;
}

}  // namespace cb::dl
