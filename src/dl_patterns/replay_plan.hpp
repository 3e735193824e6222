// What cb_replay does in one training step, worked out before anything runs: the
// collectives (fused as the chosen framework would), when each becomes ready on the
// emulated backward pass, and the resulting sequence of compute, idle, launch and wait
// actions. Pure logic (no MPI), so the step accounting is unit-tested; docs/replay.md
// describes the semantics.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/types.hpp"
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

// A window of collectives in flight per rank, counted in launch order from the oldest one
// still running: message k launches only once message k - 16 has completed. A bounded
// request queue, like a communication library's FIFO; the engine's shared-memory path
// keeps per-operation state for 16 consecutive operations, and every backend gets the
// same bound.
inline constexpr size_t kMaxInFlight = 16;

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

  size_t bytes() const { return count * dtype_size(dtype); }
};

struct ReplayAction {
  enum class Kind { Compute, Idle, Launch, WaitAll };
  Kind kind = Kind::Compute;
  double us = 0;       // Compute: emulated backward compute; Idle: waiting, e.g. a Horovod cycle
  size_t message = 0;  // Launch: index into ReplayPlan::messages
};

struct ReplayPlan {
  std::vector<ReplayMessage> messages;  // launch order
  std::vector<ReplayAction> actions;    // one step, ends with WaitAll
  std::vector<double> segment_end_us;   // compute clock at the end of each segment
  int segments = 1;

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
// collectives and step boundaries. Every other op is replayed as it is, in order.
ReplayPlan plan_trace(const Trace& trace, const FusionConfig& fusion, const ComputeSpec& compute);

// Actions of one step from messages and segment ends: compute until each message is
// ready, idle past the compute's end when a launch comes later (Horovod's cycle), launch,
// and wait for everything at each segment end.
std::vector<ReplayAction> schedule(const std::vector<ReplayMessage>& messages,
                                   const std::vector<double>& segment_end_us);

// The same step with no compute and no idling: the pure communication step.
std::vector<ReplayAction> without_compute(const std::vector<ReplayAction>& actions);

// Removes the messages `drop` selects (and their launches); compute stays as it was.
void drop_messages(ReplayPlan& plan, const std::function<bool(const ReplayMessage&)>& drop);

// The plan's messages as a trace (compute_us = time since the previous launch was ready),
// for --export-trace: one op per tensor without fusion, one per fused message otherwise.
Trace to_trace(const ReplayPlan& plan, std::string name, std::string source);

// Elements of the send and receive buffers of a message over `nranks` ranks. Allreduce
// runs in place (send 0), as DDP and Horovod do; bcast has one buffer.
struct BufferElements {
  size_t send = 0, recv = 0;
};
BufferElements buffer_elements(const ReplayMessage& m, int nranks);
// Gradients are reduced in place (DDP, Horovod): allreduces are replayed in place.
inline bool replayed_in_place(Coll c) {
  return c == Coll::Allreduce;
}

}  // namespace cb::dl
