#include "dl_patterns/replay_plan.hpp"

#include "core/coll_spec.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
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
  std::vector<std::vector<int>> groups;
  int segment = 0, run_group = -1;
  double clock_us = 0;  // compute clock: backward compute done so far in the step
  const auto flush = [&] {
    if (grads.empty()) return;
    for (const Message& m : fuse(grads, fusion)) {
      messages.push_back(message_from(m, records, segment));
      messages.back().group = run_group;
    }
    grads.clear();
    records.clear();
  };
  const auto group_of = [&](const TraceOp& op) {
    if (op.group.empty() ||
        (trace.world_size > 0 && op.group.size() == static_cast<size_t>(trace.world_size)))
      return -1;
    const auto it = std::find(groups.begin(), groups.end(), op.group);
    if (it != groups.end()) return static_cast<int>(it - groups.begin());
    groups.push_back(op.group);
    return static_cast<int>(groups.size()) - 1;
  };
  for (size_t i = 0; i < trace.ops.size(); ++i) {
    const TraceOp& op = trace.ops[i];
    const int group = group_of(op);
    if (i > 0 && op.iteration != trace.ops[i - 1].iteration) {  // step boundary
      flush();
      segment_end_us.push_back(clock_us);
      ++segment;
    }
    if (group != run_group) flush();
    run_group = group;
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
    m.group = group;
    messages.push_back(std::move(m));
  }
  flush();
  segment_end_us.push_back(clock_us);
  ReplayPlan plan = finish(std::move(messages), std::move(segment_end_us));
  plan.groups = std::move(groups);
  return plan;
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

std::vector<std::vector<ReplayAction>> replay_steps(const ReplayPlan& plan) {
  if (!plan.step_per_segment) return {plan.actions};
  std::vector<std::vector<ReplayAction>> steps(1);
  for (const ReplayAction& a : plan.actions) {
    steps.back().push_back(a);
    if (a.kind == ReplayAction::Kind::WaitAll) steps.emplace_back();
  }
  steps.pop_back();  // actions end with a WaitAll: the last list is empty
  return steps;
}

size_t calls_in_step(size_t count, size_t steps, size_t step) {
  if (steps == 0 || step >= steps) return 0;
  // ceil(s x count / steps) without overflow: s x q + ceil(s x r / steps).
  const size_t q = count / steps, r = count % steps;
  const auto before = [&](size_t s) { return s * q + (s * r + steps - 1) / steps; };
  return before(step + 1) - before(step);
}

Trace split_steps(const Trace& table, size_t steps) {
  if (steps == 0) throw std::invalid_argument("must be at least 1");
  if (table.iterations() > 1)
    throw std::invalid_argument("the trace already has " + std::to_string(table.iterations()) +
                                " steps; only a one-step count table can be split");
  struct Row {
    size_t first, count;
  };
  std::vector<Row> rows;  // runs of equal consecutive ops: the table's rows
  size_t largest = 0;
  for (size_t i = 0; i < table.ops.size(); ++i) {
    if (rows.empty() || !(table.ops[i] == table.ops[rows.back().first])) rows.push_back({i, 0});
    largest = std::max(largest, ++rows.back().count);
  }
  if (steps > largest)
    throw std::invalid_argument(
        "more steps than the table's largest count (" + std::to_string(largest) +
        "): the last step would replay nothing (a table that covers N steps calls its most "
        "frequent sizes at least N times)");
  Trace out = table;
  out.ops.clear();
  for (size_t s = 0; s < steps; ++s)
    for (const Row& row : rows) {
      TraceOp op = table.ops[row.first];
      op.iteration = static_cast<int>(s);
      out.ops.insert(out.ops.end(), calls_in_step(row.count, steps, s), op);
    }
  return out;
}

void drop_messages(ReplayPlan& plan, const std::function<bool(const ReplayMessage&)>& drop) {
  if (!plan.dependencies) {
    std::erase_if(plan.messages, drop);
    plan.actions = schedule(plan.messages, plan.segment_end_us);
    return;
  }
  std::vector<size_t> renumbered(plan.messages.size(), SIZE_MAX);
  std::vector<ReplayMessage> kept;
  for (size_t k = 0; k < plan.messages.size(); ++k)
    if (!drop(plan.messages[k])) {
      renumbered[k] = kept.size();
      kept.push_back(std::move(plan.messages[k]));
    }
  plan.messages = std::move(kept);
  std::vector<ReplayAction> actions;
  for (ReplayAction a : plan.actions) {
    if (a.kind == ReplayAction::Kind::Launch || a.kind == ReplayAction::Kind::Wait) {
      if (renumbered.at(a.message) == SIZE_MAX) continue;
      a.message = renumbered[a.message];
    }
    actions.push_back(a);
  }
  plan.actions = std::move(actions);
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
    if (m.group >= 0) {
      op.group = plan.groups.at(static_cast<size_t>(m.group));
      op.comm_size = static_cast<int>(op.group.size());
    }
    t.ops.push_back(std::move(op));
  }
  return t;
}

BufferElements buffer_elements(const ReplayMessage& m, int nranks) {
  const CollSpec* spec = find_coll_spec(m.coll);
  if (!spec) return {};
  if (m.counts) return {m.counts->max_send_total(), m.counts->max_recv_total()};
  return {replayed_in_place(m.coll) ? 0 : spec->send_elements(m.count, nranks),
          spec->recv_elements(m.count, nranks)};
}

size_t buffer_bytes(const ReplayMessage& m, int nranks) {
  const BufferElements e = buffer_elements(m, nranks);
  return (e.send + e.recv) * dtype_size(m.dtype);
}

size_t BufferPlan::total_bytes() const {
  size_t sum = 0;
  for (size_t b : bytes) sum += b;
  return sum;
}

size_t BufferPlan::largest_bytes() const {
  return bytes.empty() ? 0 : *std::max_element(bytes.begin(), bytes.end());
}

std::string BufferPlan::sizes_text() const {
  std::map<size_t, size_t, std::greater<>> by_size;
  for (size_t b : bytes) ++by_size[b];
  std::string text;
  for (const auto& [size, n] : by_size)
    text += (text.empty() ? "" : " + ") + std::to_string(n) + " x " + std::to_string(size) + " B";
  return text;
}

size_t BufferPlan::reuse_waits() const {
  return static_cast<size_t>(
      std::count_if(waits_for.begin(), waits_for.end(), [](size_t j) { return j != SIZE_MAX; }));
}

BufferPlan share_buffers(const std::vector<size_t>& message_bytes, const std::vector<int>& segments,
                         size_t window, const std::vector<size_t>& done_before) {
  BufferPlan p;
  p.window = window;
  std::vector<size_t> last_user;  // per buffer: the latest message that used it
  for (size_t k = 0; k < message_bytes.size(); ++k) {
    const size_t need = message_bytes[k];
    // Complete before k launches whatever the timing: no wait needed.
    const auto done = [&](size_t j) {
      return segments.at(j) != segments.at(k) || (j < done_before.size() && done_before[j] <= k);
    };
    const auto free = [&](size_t b) {
      const size_t j = last_user[b];
      return done(j) || (window > 0 && k - j >= window);
    };
    size_t fit = SIZE_MAX, largest = SIZE_MAX;  // smallest free that fits; largest free
    for (size_t b = 0; b < p.bytes.size(); ++b) {
      if (!free(b)) continue;
      if (p.bytes[b] >= need && (fit == SIZE_MAX || p.bytes[b] < p.bytes[fit])) fit = b;
      if (largest == SIZE_MAX || p.bytes[b] > p.bytes[largest]) largest = b;
    }
    size_t chosen = fit != SIZE_MAX ? fit : largest;
    if (chosen == SIZE_MAX) {
      chosen = p.bytes.size();
      p.bytes.push_back(0);
      last_user.push_back(k);
    }
    const size_t previous = last_user[chosen];
    p.waits_for.push_back(previous != k && !done(previous) ? previous : SIZE_MAX);
    p.bytes[chosen] = std::max(p.bytes[chosen], need);
    last_user[chosen] = k;
    p.buffer_of.push_back(chosen);
  }
  return p;
}

BufferPlan share_buffers(const ReplayPlan& plan, int nranks, size_t window) {
  std::vector<size_t> bytes;
  std::vector<int> segments;
  for (const ReplayMessage& m : plan.messages) {
    bytes.push_back(buffer_bytes(m, plan.ranks_of(m, nranks)));
    segments.push_back(m.segment);
  }
  std::vector<size_t> done_before;  // Wait actions: complete before the next launch
  if (plan.dependencies) {
    done_before.assign(plan.messages.size(), SIZE_MAX);
    size_t next = 0;  // the next message to launch (launches are in message order)
    for (const ReplayAction& a : plan.actions) {
      if (a.kind == ReplayAction::Kind::Launch) next = a.message + 1;
      if (a.kind == ReplayAction::Kind::Wait) done_before.at(a.message) = next;
    }
  }
  return share_buffers(bytes, segments, window, done_before);
}

BufferPlan plan_buffers(const ReplayPlan& plan, int nranks, size_t limit) {
  BufferPlan own = share_buffers(plan, nranks, 0);
  if (own.total_bytes() <= limit) return own;
  return share_buffers(plan, nranks, kShareWindow);
}

std::vector<std::pair<size_t, size_t>> validation_batches(const ReplayPlan& plan,
                                                          const BufferPlan& buffers) {
  std::vector<std::pair<size_t, size_t>> batches;
  std::vector<bool> used(buffers.bytes.size());
  const size_t n = plan.messages.size();
  for (size_t first = 0; first < n;) {
    std::fill(used.begin(), used.end(), false);
    size_t end = first;
    while (end < n && plan.messages[end].segment == plan.messages[first].segment &&
           !used.at(buffers.buffer_of.at(end)))
      used[buffers.buffer_of[end++]] = true;
    batches.emplace_back(first, end);
    first = end;
  }
  return batches;
}

}  // namespace cb::dl
