// How data-parallel frameworks turn per-tensor gradients into collectives:
// one allreduce per tensor, Horovod tensor fusion, or PyTorch DDP buckets.
// The rules are taken from the frameworks' sources; docs/trace-format.md cites them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/types.hpp"
#include "dl_patterns/models.hpp"
#include "dl_patterns/trace.hpp"

namespace cb::dl {

inline constexpr size_t kMiB = size_t{1} << 20;
inline constexpr size_t kHorovodDefaultThreshold = 128 * kMiB;  // HOROVOD_FUSION_THRESHOLD
inline constexpr double kHorovodDefaultCycleMs = 1.0;           // HOROVOD_CYCLE_TIME
inline constexpr size_t kDdpDefaultBucketCap = 25 * kMiB;       // bucket_cap_mb
inline constexpr size_t kDdpDefaultFirstBucket = 1 * kMiB;      // kDefaultFirstBucketBytes

struct Gradient {
  std::string name;
  size_t count = 0;
  Dtype dtype = Dtype::Float;
  double ready_us = 0;  // when the backward pass produces it, from the step's start

  size_t bytes() const { return count * dtype_size(dtype); }
};

// One collective: a single gradient or several fused ones (same dtype).
struct Message {
  size_t count = 0;
  Dtype dtype = Dtype::Float;
  double ready_us = 0;          // when it can be launched
  std::vector<size_t> members;  // indices into fuse()'s input, in packing order
  std::string name;

  size_t bytes() const { return count * dtype_size(dtype); }
};

enum class FusionPolicy { None, Horovod, Ddp };

// parse_fusion fills in the framework defaults; the bare struct means "no fusion".
struct FusionConfig {
  FusionPolicy policy = FusionPolicy::None;
  size_t threshold_bytes = 0;     // Horovod fusion threshold (0 = off) / DDP bucket cap
  double cycle_ms = 1.0;          // Horovod cycle time
  size_t first_bucket_bytes = 0;  // DDP first bucket limit
};

// "none" | "horovod[:THRESHOLD_MiB[:CYCLE_ms]]" | "ddp[:CAP_MiB[:FIRST_MiB]]".
// Empty parameters keep their defaults ("horovod::5"). Throws std::invalid_argument.
FusionConfig parse_fusion(std::string_view spec);
std::string describe(const FusionConfig& config);

// Gradients of `model` in the order backward produces them: reverse registration order.
// Ready times model backward compute as proportional to gradient size: each tensor adds
// us_per_mb microseconds per MiB of its gradient (0: all ready at once). Crude (conv
// FLOPs do not follow parameter counts) but it staggers arrivals plausibly.
std::vector<Gradient> backward_order(const Model& model, double us_per_mb = 0);

// Groups gradients into messages, in launch order. Input is taken in ready order
// (stable-sorted by ready_us). Throws std::invalid_argument on a zero count or a
// negative or non-finite ready time.
std::vector<Message> fuse(const std::vector<Gradient>& in_ready_order, const FusionConfig& config);

// Allreduce trace of the messages; compute_us = time since the previous message was ready.
Trace to_trace(const std::vector<Message>& messages, std::string name, std::string source);
// The whole recipe: backward_order -> fuse -> to_trace, source "model:<name>".
Trace model_trace(const Model& model, const FusionConfig& config, double us_per_mb = 0);

}  // namespace cb::dl
