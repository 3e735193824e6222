#include "dl_patterns/replay_plan.hpp"

#include "core/coll_spec.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace cb::dl {
namespace {

constexpr double kNegligibleUs = 1e-6;  // rounding noise of accumulated ready times

// A gradient is a sum allreduce: what data-parallel frameworks fuse. Everything else
// (other reductions, bcast, alltoall ...) is replayed as it is.
bool is_gradient(const TraceOp& op) {
  return op.coll == Coll::Allreduce && op.op == Op::Sum;
}

ReplayMessage message_from(const Message& m, const std::vector<size_t>& records, int segment) {
  ReplayMessage r;
  r.count = m.count;
  r.dtype = m.dtype;
  r.name = m.name;
  r.record = records.at(m.members.front());
  r.members = m.members.size();
  r.ready_us = m.ready_us;
  r.segment = segment;
  return r;
}

// Launches follow the fused order; a message never launches before the one ahead of it.
void make_ready_times_monotone(std::vector<ReplayMessage>& messages) {
  for (size_t k = 1; k < messages.size(); ++k)
    if (messages[k].segment == messages[k - 1].segment)
      messages[k].ready_us = std::max(messages[k].ready_us, messages[k - 1].ready_us);
}

ReplayPlan finish(std::vector<ReplayMessage> messages, std::vector<double> segment_end_us) {
  ReplayPlan plan;
  make_ready_times_monotone(messages);
  plan.messages = std::move(messages);
  plan.segment_end_us = std::move(segment_end_us);
  plan.segments = static_cast<int>(plan.segment_end_us.size());
  plan.actions = schedule(plan.messages, plan.segment_end_us);
  return plan;
}

}  // namespace

ComputeSpec parse_compute(std::string_view spec) {
  const std::string usage =
      " (expected none, trace or us-per-mb:X, X = microseconds of backward compute per MiB of "
      "gradient)";
  if (spec == "none") return {};
  if (spec == "trace") return {ComputeSpec::Mode::Trace, 0};
  constexpr std::string_view kPrefix = "us-per-mb:";
  if (spec.substr(0, kPrefix.size()) != kPrefix)
    throw std::invalid_argument("unknown compute \"" + std::string(spec) + "\"" + usage);
  const std::string_view number = spec.substr(kPrefix.size());
  double x = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), x);
  if (number.empty() || ec != std::errc() || end != number.data() + number.size() ||
      !std::isfinite(x) || x < 0 || x > 1e9)
    throw std::invalid_argument("compute \"" + std::string(spec) + "\": X must be a number of " +
                                "microseconds per MiB in [0, 1e9] (e.g. us-per-mb:200)");
  return {ComputeSpec::Mode::PerMiB, x};
}

std::string describe(const ComputeSpec& spec) {
  switch (spec.mode) {
    case ComputeSpec::Mode::None:
      return "none";
    case ComputeSpec::Mode::Trace:
      return "trace";
    case ComputeSpec::Mode::PerMiB:
      break;
  }
  std::ostringstream s;
  s << "us-per-mb:" << spec.us_per_mib;
  return s.str();
}

double ReplayPlan::compute_us() const {
  double sum = 0;
  for (const ReplayAction& a : actions)
    if (a.kind == ReplayAction::Kind::Compute) sum += a.us;
  return sum;
}

double ReplayPlan::idle_us() const {
  double sum = 0;
  for (const ReplayAction& a : actions)
    if (a.kind == ReplayAction::Kind::Idle) sum += a.us;
  return sum;
}

size_t ReplayPlan::total_bytes() const {
  size_t sum = 0;
  for (const ReplayMessage& m : messages) sum += m.bytes();
  return sum;
}

ReplayPlan plan_model(const Model& model, Dtype dtype, const FusionConfig& fusion,
                      const ComputeSpec& compute) {
  const double us_per_mib = compute.mode == ComputeSpec::Mode::PerMiB  ? compute.us_per_mib
                            : compute.mode == ComputeSpec::Mode::Trace ? kModelDefaultUsPerMiB
                                                                       : 0.0;
  Model typed = model;
  for (Tensor& t : typed.tensors) t.dtype = dtype;
  const std::vector<Gradient> grads = backward_order(typed, us_per_mib);
  std::vector<size_t> records(grads.size());
  for (size_t i = 0; i < records.size(); ++i) records[i] = i;  // tensor index in backward order
  std::vector<ReplayMessage> messages;
  for (const Message& m : fuse(grads, fusion)) messages.push_back(message_from(m, records, 0));
  return finish(std::move(messages), {grads.empty() ? 0.0 : grads.back().ready_us});
}

ReplayPlan plan_trace(const Trace& trace, const FusionConfig& fusion, const ComputeSpec& compute) {
  std::vector<ReplayMessage> messages;
  std::vector<double> segment_end_us;
  std::vector<Gradient> grads;  // the run of gradients since the last other collective
  std::vector<size_t> records;
  int segment = 0;
  double clock_us = 0;  // compute clock: backward compute done so far in the step
  const auto flush = [&] {
    if (grads.empty()) return;
    for (const Message& m : fuse(grads, fusion))
      messages.push_back(message_from(m, records, segment));
    grads.clear();
    records.clear();
  };
  for (size_t i = 0; i < trace.ops.size(); ++i) {
    const TraceOp& op = trace.ops[i];
    if (i > 0 && op.iteration != trace.ops[i - 1].iteration) {  // step boundary
      flush();
      segment_end_us.push_back(clock_us);
      ++segment;
    }
    if (compute.mode == ComputeSpec::Mode::Trace)
      clock_us += op.compute_us;
    else if (compute.mode == ComputeSpec::Mode::PerMiB && is_gradient(op))
      clock_us += compute.us_per_mib * static_cast<double>(op.bytes()) / static_cast<double>(kMiB);
    if (is_gradient(op)) {
      grads.push_back({op.name.empty() ? "ops[" + std::to_string(i) + "]" : op.name, op.count,
                       op.dtype, clock_us});
      records.push_back(i);
      continue;
    }
    flush();
    ReplayMessage m{op.coll, op.count, op.dtype, op.op, op.root, op.name, i, 1, clock_us, segment};
    messages.push_back(std::move(m));
  }
  flush();
  segment_end_us.push_back(clock_us);
  return finish(std::move(messages), std::move(segment_end_us));
}

std::vector<ReplayAction> schedule(const std::vector<ReplayMessage>& messages,
                                   const std::vector<double>& segment_end_us) {
  using Kind = ReplayAction::Kind;
  std::vector<ReplayAction> actions;
  size_t k = 0;
  for (size_t s = 0; s < segment_end_us.size(); ++s) {
    const double end = segment_end_us[s];
    double pos = s == 0 ? 0.0 : segment_end_us[s - 1];  // compute clock, then idle time past end
    for (; k < messages.size() && messages[k].segment == static_cast<int>(s); ++k) {
      const double ready = messages[k].ready_us;
      const double compute = std::min(ready, end) - pos;
      if (compute > kNegligibleUs) {
        actions.push_back({Kind::Compute, compute, 0});
        pos += compute;
      }
      if (ready - pos > kNegligibleUs) {  // only after the compute ended: a Horovod cycle
        actions.push_back({Kind::Idle, ready - pos, 0});
        pos = ready;
      }
      actions.push_back({Kind::Launch, 0, k});
    }
    if (end - pos > kNegligibleUs) actions.push_back({Kind::Compute, end - pos, 0});
    actions.push_back({Kind::WaitAll, 0, 0});  // the optimizer step needs every result
  }
  return actions;
}

std::vector<ReplayAction> without_compute(const std::vector<ReplayAction>& actions) {
  std::vector<ReplayAction> out;
  for (const ReplayAction& a : actions)
    if (a.kind != ReplayAction::Kind::Compute && a.kind != ReplayAction::Kind::Idle)
      out.push_back(a);
  return out;
}

void drop_messages(ReplayPlan& plan, const std::function<bool(const ReplayMessage&)>& drop) {
  std::erase_if(plan.messages, drop);
  plan.actions = schedule(plan.messages, plan.segment_end_us);
}

Trace to_trace(const ReplayPlan& plan, std::string name, std::string source) {
  Trace t;
  t.name = std::move(name);
  t.source = std::move(source);
  double previous_us = 0;
  int segment = 0;
  for (const ReplayMessage& m : plan.messages) {
    if (m.segment != segment) {
      segment = m.segment;
      previous_us = m.segment > 0 ? plan.segment_end_us[static_cast<size_t>(m.segment - 1)] : 0;
    }
    TraceOp op{m.coll, m.count, m.dtype, m.op, m.root, m.name, 0, m.segment};
    op.compute_us = std::max(0.0, m.ready_us - previous_us);
    previous_us = std::max(previous_us, m.ready_us);
    t.ops.push_back(std::move(op));
  }
  return t;
}

BufferElements buffer_elements(const ReplayMessage& m, int nranks) {
  const CollSpec* spec = find_coll_spec(m.coll);
  if (!spec) return {};
  return {replayed_in_place(m.coll) ? 0 : spec->send_elements(m.count, nranks), spec->recv_elements(m.count, nranks)};
}

}  // namespace cb::dl
