#include "dl_patterns/parallel.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace cb::dl {
namespace {

using Kind = ReplayAction::Kind;

double us_per_mib_of(const ComputeSpec& compute) {
  return compute.mode == ComputeSpec::Mode::PerMiB  ? compute.us_per_mib
         : compute.mode == ComputeSpec::Mode::Trace ? kModelDefaultUsPerMiB
                                                    : 0.0;
}

bool all_digits(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

// "transformer.h.3.attn.c_attn.weight" -> "transformer.h.3"; "" for the root unit.
std::string group_of(const std::string& name) {
  size_t start = 0;
  while (start <= name.size()) {
    const size_t dot = std::min(name.find('.', start), name.size());
    if (all_digits(std::string_view(name).substr(start, dot - start))) return name.substr(0, dot);
    start = dot + 1;
  }
  return {};
}

ReplayMessage message(Coll coll, size_t count, Dtype dtype, std::string name, size_t record,
                      size_t members, double ready_us, int segment = 0) {
  ReplayMessage m;
  m.coll = coll;
  m.count = count;
  m.dtype = dtype;
  m.name = std::move(name);
  m.record = record;
  m.members = members;
  m.ready_us = ready_us;
  m.segment = segment;
  return m;
}

ReplayPlan plan_fsdp(const Model& model, Dtype dtype, const ComputeSpec& compute, int n) {
  const std::vector<FsdpUnit> units = fsdp_units(model);
  const double us_per_mib = us_per_mib_of(compute);
  const double width = static_cast<double>(dtype_size(dtype));
  ReplayPlan p;
  p.dependencies = true;
  double clock = 0;
  const auto launch = [&](Coll coll, const FsdpUnit& u, const char* what) {
    p.messages.push_back(message(coll, shard_elements(u.numel, n), dtype,
                                 std::string("fsdp.") + what + "[" + u.name + "]", u.first,
                                 u.tensors, clock));
    p.actions.push_back({Kind::Launch, 0, p.messages.size() - 1});
    return p.messages.size() - 1;
  };
  const auto compute_for = [&](const FsdpUnit& u, double share) {
    const double us =
        share * us_per_mib * static_cast<double>(u.numel) * width / static_cast<double>(kMiB);
    if (us > 0) p.actions.push_back({Kind::Compute, us, 0});
    clock += us;
  };
  const size_t count = units.size();
  std::vector<size_t> gathered(count);
  // Forward: unit k's allgather was issued before unit k-1's compute (prefetch); unit k
  // issues k+1's, then waits for its own parameters and runs.
  if (count > 0) gathered[0] = launch(Coll::Allgather, units[0], "fwd_allgather");
  for (size_t k = 0; k < count; ++k) {
    if (k + 1 < count) gathered[k + 1] = launch(Coll::Allgather, units[k + 1], "fwd_allgather");
    p.actions.push_back({Kind::Wait, 0, gathered[k]});
    compute_for(units[k], kForwardShareOfBackward);
  }
  // Backward, last unit first: gather again (resharded after forward), prefetch the next
  // unit's, wait, compute, and reduce_scatter the unit's gradients.
  if (count > 0) gathered[count - 1] = launch(Coll::Allgather, units[count - 1], "bwd_allgather");
  for (size_t k = count; k-- > 0;) {
    if (k > 0) gathered[k - 1] = launch(Coll::Allgather, units[k - 1], "bwd_allgather");
    p.actions.push_back({Kind::Wait, 0, gathered[k]});
    compute_for(units[k], 1.0);
    launch(Coll::ReduceScatter, units[k], "reduce_scatter");
  }
  p.actions.push_back({Kind::WaitAll, 0, 0});  // the optimizer step needs every shard
  p.segment_end_us = {clock};
  p.segments = 1;
  return p;
}

ReplayPlan plan_zero(const Model& model, Dtype dtype, const ParallelConfig& config,
                     const ComputeSpec& compute, int n) {
  Model typed = model;
  for (Tensor& t : typed.tensors) t.dtype = dtype;
  const std::vector<Gradient> grads = backward_order(typed, us_per_mib_of(compute));
  const double end = grads.empty() ? 0.0 : grads.back().ready_us;
  const std::string tag = config.mode == Parallel::Zero1 ? "zero1." : "zero2.";
  std::vector<ReplayMessage> messages;
  const auto buckets = zero_buckets(grads, config.bucket_elements);
  for (size_t b = 0; b < buckets.size(); ++b) {
    const auto [first, last] = buckets[b];
    size_t numel = 0;
    for (size_t i = first; i < last; ++i) numel += grads[i].count;
    // ZeRO-2 reduces a bucket when the next gradient does not fit (its hook runs when that
    // gradient is ready), the last one when backward ends; ZeRO-1 reduces after backward.
    const double ready =
        config.mode == Parallel::Zero2 && last < grads.size() ? grads[last].ready_us : end;
    messages.push_back(message(Coll::ReduceScatter, shard_elements(numel, n), dtype,
                               tag + "reduce_scatter[" + std::to_string(b) + "]",
                               grads.size() - last, last - first, ready));
  }
  // After the optimizer step every rank's updated partition of each bucket is gathered.
  for (size_t b = 0; b < buckets.size(); ++b) {
    const ReplayMessage& rs = messages[b];
    messages.push_back(message(Coll::Allgather, rs.count, dtype,
                               tag + "allgather[" + std::to_string(b) + "]", rs.record, rs.members,
                               end, 1));
  }
  ReplayPlan p;
  p.messages = std::move(messages);
  p.segment_end_us = {end, end};
  p.segments = 2;
  p.actions = schedule(p.messages, p.segment_end_us);
  return p;
}

}  // namespace

ParallelConfig parse_parallel(std::string_view spec) {
  const std::string usage = " (expected ddp, zero1[:ELEMENTS], zero2[:ELEMENTS] or fsdp)";
  const size_t colon = spec.find(':');
  const std::string_view mode = spec.substr(0, colon);
  ParallelConfig c;
  if (mode == "ddp")
    c.mode = Parallel::Ddp;
  else if (mode == "zero1")
    c.mode = Parallel::Zero1;
  else if (mode == "zero2")
    c.mode = Parallel::Zero2;
  else if (mode == "fsdp")
    c.mode = Parallel::Fsdp;
  else
    throw std::invalid_argument("unknown mode \"" + std::string(spec) + "\"" + usage);
  if (colon == std::string_view::npos) return c;
  if (c.mode != Parallel::Zero1 && c.mode != Parallel::Zero2)
    throw std::invalid_argument("\"" + std::string(spec) + "\": only zero1 and zero2 take a " +
                                "bucket size" + usage);
  const std::string_view number = spec.substr(colon + 1);
  double x = 0;
  const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), x);
  if (number.empty() || ec != std::errc() || ptr != number.data() + number.size() ||
      !std::isfinite(x) || x < 1 || x > 1e15 || x != std::floor(x))
    throw std::invalid_argument("\"" + std::string(spec) +
                                "\": the bucket size must be a whole number of elements >= 1 " +
                                "(e.g. zero2:5e8)");
  c.bucket_elements = static_cast<size_t>(x);
  return c;
}

const char* mode_name(Parallel mode) {
  switch (mode) {
    case Parallel::Ddp:
      return "ddp";
    case Parallel::Zero1:
      return "zero1";
    case Parallel::Zero2:
      return "zero2";
    case Parallel::Fsdp:
      return "fsdp";
  }
  return "?";
}

std::string describe(const ParallelConfig& config) {
  std::string s = mode_name(config.mode);
  if (config.mode == Parallel::Zero1 || config.mode == Parallel::Zero2)
    s += ":" + std::to_string(config.bucket_elements);
  return s;
}

std::vector<FsdpUnit> fsdp_units(const Model& model) {
  FsdpUnit root{"root", 0, 0, 0};  // no group: the root FSDP module's own parameters
  std::vector<FsdpUnit> groups;
  for (size_t i = 0; i < model.tensors.size(); ++i) {
    const std::string g = group_of(model.tensors[i].name);
    if (g.empty()) {
      if (root.tensors++ == 0) root.first = i;
      root.numel += model.tensors[i].numel();
      continue;
    }
    if (groups.empty() || groups.back().name != g ||
        groups.back().first + groups.back().tensors != i)
      groups.push_back({g, i, 0, 0});
    ++groups.back().tensors;
    groups.back().numel += model.tensors[i].numel();
  }
  std::vector<FsdpUnit> units;
  if (root.tensors > 0) units.push_back(root);
  units.insert(units.end(), groups.begin(), groups.end());
  return units;
}

size_t shard_elements(size_t numel, int nranks) {
  const size_t n = static_cast<size_t>(std::max(nranks, 1));
  return (numel + n - 1) / n;
}

std::vector<std::pair<size_t, size_t>> zero_buckets(const std::vector<Gradient>& backward,
                                                    size_t bucket_elements) {
  std::vector<std::pair<size_t, size_t>> buckets;
  size_t first = 0, elements = 0;
  for (size_t i = 0; i < backward.size(); ++i) {
    if (elements > 0 && elements + backward[i].count > bucket_elements) {
      buckets.emplace_back(first, i);
      first = i;
      elements = 0;
    }
    elements += backward[i].count;
  }
  if (first < backward.size()) buckets.emplace_back(first, backward.size());
  return buckets;
}

ReplayPlan plan_parallel(const Model& model, Dtype dtype, const FusionConfig& fusion,
                         const ParallelConfig& parallel, const ComputeSpec& compute, int nranks) {
  if (nranks < 1) throw std::invalid_argument("nranks must be at least 1");
  switch (parallel.mode) {
    case Parallel::Ddp:
      break;
    case Parallel::Fsdp:
      return plan_fsdp(model, dtype, compute, nranks);
    case Parallel::Zero1:
    case Parallel::Zero2:
      return plan_zero(model, dtype, parallel, compute, nranks);
  }
  return plan_model(model, dtype, fusion, compute);
}

}  // namespace cb::dl
