#include "dl_patterns/fusion.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <deque>
#include <iomanip>
#include <map>
#include <numeric>
#include <optional>
#include <sstream>
#include <stdexcept>

namespace cb::dl {
namespace {

// "a .. b (N tensors)" for fused messages, the tensor's own name otherwise.
std::string span_name(const std::vector<Gradient>& grads, const std::vector<size_t>& members) {
  if (members.size() == 1) return grads[members.front()].name;
  return grads[members.front()].name + " .. " + grads[members.back()].name + " (" +
         std::to_string(members.size()) + " tensors)";
}

Message make_message(const std::vector<Gradient>& grads, std::vector<size_t> members,
                     double ready_us) {
  Message m;
  m.dtype = grads[members.front()].dtype;
  for (size_t i : members) m.count += grads[i].count;
  m.ready_us = ready_us;
  m.name = span_name(grads, members);
  m.members = std::move(members);
  return m;
}

std::vector<Message> fuse_none(const std::vector<Gradient>& grads,
                               const std::vector<size_t>& order) {
  std::vector<Message> out;
  for (size_t i : order) out.push_back(make_message(grads, {i}, grads[i].ready_us));
  return out;
}

// Horovod (controller.cc FuseResponses): at each cycle end, greedily pack the queue.
// Horovod pads each tensor to 16 B in its GPU batched copy; that padding is not modelled.
void pack_horovod_cycle(const std::vector<Gradient>& grads, std::deque<size_t> queue,
                        double cycle_end_us, size_t threshold, std::vector<Message>& out) {
  while (!queue.empty()) {
    std::vector<size_t> members{queue.front()};
    queue.pop_front();
    const Dtype dtype = grads[members.front()].dtype;
    size_t fused = grads[members.front()].bytes();
    std::vector<size_t> skipped;
    size_t skipped_bytes = 0;
    while (!queue.empty()) {
      const Gradient& next = grads[queue.front()];
      if (next.dtype == dtype && fused + next.bytes() <= threshold) {
        fused += next.bytes();
        members.push_back(queue.front());
      } else {
        // Look ahead past a misfit (mixed precision) while fused + all skipped still fits,
        // exactly as Horovod tests it: so a same-dtype tensor too big to fit ends the search.
        skipped_bytes += next.bytes();
        if (fused + skipped_bytes > threshold) break;
        skipped.push_back(queue.front());
      }
      queue.pop_front();
    }
    queue.insert(queue.begin(), skipped.begin(), skipped.end());  // packed next, same cycle
    out.push_back(make_message(grads, std::move(members), cycle_end_us));
  }
}

std::vector<Message> fuse_horovod(const std::vector<Gradient>& grads,
                                  const std::vector<size_t>& order, const FusionConfig& config) {
  // A tensor ready at t is handled at the first cycle end k * cycle >= t; cycle 0 means
  // the background loop never sleeps, so tensors fuse only with those ready at the same time.
  const double cycle_us = config.cycle_ms * 1000.0;
  auto cycle_end = [cycle_us](double t) {
    if (cycle_us <= 0) return t;
    return std::max(0.0, std::ceil(t / cycle_us - 1e-9) * cycle_us);  // tolerate rounding
  };
  std::vector<Message> out;
  for (size_t pos = 0; pos < order.size();) {
    const double end = cycle_end(grads[order[pos]].ready_us);
    std::deque<size_t> queue;
    while (pos < order.size() && cycle_end(grads[order[pos]].ready_us) == end)
      queue.push_back(order[pos++]);
    pack_horovod_cycle(grads, std::move(queue), end, config.threshold_bytes, out);
  }
  return out;
}

// PyTorch DDP after rebuild_buckets() (reducer.cpp compute_bucket_assignment_by_size):
// per dtype, add tensors in ready order and close the bucket once it reaches its limit
// (so buckets overshoot); the first bucket of each dtype uses the smaller first limit.
std::vector<Message> fuse_ddp(const std::vector<Gradient>& grads, const std::vector<size_t>& order,
                              const FusionConfig& config) {
  struct OpenBucket {
    std::vector<size_t> members;
    size_t bytes = 0;
    size_t closed = 0;  // buckets already closed for this dtype
  };
  std::map<Dtype, OpenBucket> open;
  std::vector<std::vector<size_t>> buckets;  // in closing order
  for (size_t i : order) {
    OpenBucket& b = open[grads[i].dtype];
    b.members.push_back(i);
    b.bytes += grads[i].bytes();
    if (b.bytes >= (b.closed == 0 ? config.first_bucket_bytes : config.threshold_bytes)) {
      buckets.push_back(std::move(b.members));
      b = OpenBucket{{}, 0, b.closed + 1};
    }
  }
  // Partly filled buckets close at the end, ordered by when their first tensor arrived.
  std::vector<size_t> rank_in_order(grads.size());
  for (size_t r = 0; r < order.size(); ++r) rank_in_order[order[r]] = r;
  std::vector<std::vector<size_t>> rest;
  for (auto& [dtype, b] : open)
    if (!b.members.empty()) rest.push_back(std::move(b.members));
  std::sort(rest.begin(), rest.end(), [&](const auto& a, const auto& b) {
    return rank_in_order[a.front()] < rank_in_order[b.front()];
  });
  buckets.insert(buckets.end(), rest.begin(), rest.end());

  // A bucket launches once all its gradients are ready and every earlier bucket launched.
  std::vector<Message> out;
  double launched_us = 0;
  for (size_t k = 0; k < buckets.size(); ++k) {
    for (size_t i : buckets[k]) launched_us = std::max(launched_us, grads[i].ready_us);
    Message m = make_message(grads, std::move(buckets[k]), launched_us);
    m.name = "bucket " + std::to_string(k) + ": " + m.name;
    out.push_back(std::move(m));
  }
  return out;
}

// A non-negative decimal parameter of a fusion spec; nullopt when left empty.
std::optional<double> spec_number(std::string_view text, std::string_view what, double max,
                                  std::string_view spec) {
  if (text.empty()) return std::nullopt;
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value < 0 ||
      value > max) {
    std::ostringstream msg;
    msg << "fusion spec \"" << spec << "\": " << what << " \"" << text
        << "\" must be a number from 0 to " << std::fixed << std::setprecision(0) << max;
    throw std::invalid_argument(msg.str());
  }
  return value;
}

size_t mib_to_bytes(double mib) {
  return static_cast<size_t>(std::llround(mib * static_cast<double>(kMiB)));
}

std::string mib_text(size_t bytes) {
  std::ostringstream s;
  s << static_cast<double>(bytes) / static_cast<double>(kMiB) << " MiB";
  return s.str();
}

}  // namespace

FusionConfig parse_fusion(std::string_view spec) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    const size_t colon = spec.find(':', start);
    parts.push_back(spec.substr(start, colon - start));
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  std::string policy;
  for (unsigned char c : parts[0]) policy += static_cast<char>(std::tolower(c));
  const std::string usage =
      "expected none, horovod[:THRESHOLD_MiB[:CYCLE_ms]] or ddp[:CAP_MiB[:FIRST_MiB]]";
  if (parts.size() > 3)
    throw std::invalid_argument("fusion spec \"" + std::string(spec) + "\": too many parameters; " +
                                usage);
  constexpr double kMaxMiB = 1 << 20;  // 1 TiB
  constexpr double kMaxCycleMs = 60'000;
  const auto param = [&](size_t i, std::string_view what, double max) {
    return i < parts.size() ? spec_number(parts[i], what, max, spec) : std::nullopt;
  };

  FusionConfig c;
  if (policy == "none") {
    if (parts.size() > 1)
      throw std::invalid_argument("fusion spec \"" + std::string(spec) +
                                  "\": none takes no parameters");
  } else if (policy == "horovod") {
    c.policy = FusionPolicy::Horovod;
    const auto threshold = param(1, "threshold (MiB)", kMaxMiB);
    c.threshold_bytes = threshold ? mib_to_bytes(*threshold) : kHorovodDefaultThreshold;
    c.cycle_ms = param(2, "cycle time (ms)", kMaxCycleMs).value_or(kHorovodDefaultCycleMs);
  } else if (policy == "ddp") {
    c.policy = FusionPolicy::Ddp;
    const auto cap = param(1, "bucket cap (MiB)", kMaxMiB);
    const auto first = param(2, "first bucket (MiB)", kMaxMiB);
    c.threshold_bytes = cap ? mib_to_bytes(*cap) : kDdpDefaultBucketCap;
    c.first_bucket_bytes = first ? mib_to_bytes(*first) : kDdpDefaultFirstBucket;
  } else {
    throw std::invalid_argument("unknown fusion policy \"" + std::string(spec) + "\": " + usage);
  }
  return c;
}

std::string describe(const FusionConfig& c) {
  std::ostringstream s;
  switch (c.policy) {
    case FusionPolicy::None:
      return "none (one allreduce per gradient)";
    case FusionPolicy::Horovod:
      s << "horovod ("
        << (c.threshold_bytes ? "fusion threshold " + mib_text(c.threshold_bytes) : "fusion off")
        << ", cycle " << c.cycle_ms << " ms)";
      return s.str();
    case FusionPolicy::Ddp:
      return "ddp (first bucket " + mib_text(c.first_bucket_bytes) + ", then " +
             mib_text(c.threshold_bytes) + ")";
  }
  return "?";
}

std::vector<Gradient> backward_order(const Model& model, double us_per_mb) {
  if (!std::isfinite(us_per_mb) || us_per_mb < 0)
    throw std::invalid_argument("backward compute time per MiB must be a non-negative number");
  std::vector<Gradient> grads;
  double now_us = 0;
  for (auto t = model.tensors.rbegin(); t != model.tensors.rend(); ++t) {
    now_us += us_per_mb * static_cast<double>(t->bytes()) / static_cast<double>(kMiB);
    grads.push_back({t->name, t->numel(), t->dtype, now_us});
  }
  return grads;
}

std::vector<Message> fuse(const std::vector<Gradient>& grads, const FusionConfig& config) {
  for (const Gradient& g : grads) {
    if (g.count == 0) throw std::invalid_argument("gradient \"" + g.name + "\" has no elements");
    if (!std::isfinite(g.ready_us) || g.ready_us < 0)
      throw std::invalid_argument("gradient \"" + g.name + "\" has an invalid ready time");
  }
  std::vector<size_t> order(grads.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return grads[a].ready_us < grads[b].ready_us; });
  switch (config.policy) {
    case FusionPolicy::None:
      return fuse_none(grads, order);
    case FusionPolicy::Horovod:
      return fuse_horovod(grads, order, config);
    case FusionPolicy::Ddp:
      return fuse_ddp(grads, order, config);
  }
  return {};
}

Trace to_trace(const std::vector<Message>& messages, std::string name, std::string source) {
  Trace t;
  t.name = std::move(name);
  t.source = std::move(source);
  double previous_us = 0;
  for (const Message& m : messages) {
    TraceOp op;
    op.coll = Coll::Allreduce;
    op.count = m.count;
    op.dtype = m.dtype;
    op.name = m.name;
    op.compute_us = std::max(0.0, m.ready_us - previous_us);
    previous_us = std::max(previous_us, m.ready_us);
    t.ops.push_back(std::move(op));
  }
  return t;
}

Trace model_trace(const Model& model, const FusionConfig& config, double us_per_mb) {
  return to_trace(fuse(backward_order(model, us_per_mb), config), model.name,
                  "model:" + model.name);
}

}  // namespace cb::dl
