// Sharded data parallelism as PyTorch FSDP and DeepSpeed ZeRO-1/2 run it, as replay plans:
// which collectives a training step of a built-in model issues (allgather of parameters,
// reduce_scatter of gradients), when, and what each must wait for. Pure logic; the rules
// and their sources are in docs/replay.md ("Sharded data parallelism").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/types.hpp"
#include "dl_patterns/fusion.hpp"
#include "dl_patterns/models.hpp"
#include "dl_patterns/replay_plan.hpp"

namespace cb::dl {

// DeepSpeed's reduce_bucket_size / allgather_bucket_size default (elements).
inline constexpr size_t kDeepSpeedBucketElements = 500'000'000;
// The replay's default: DeepSpeed's scaled down 20x. 5e8 exceeds every built-in model
// (GPT-2 has 1.24e8 parameters) and would make one bucket at the end of backward;
// 2.5e7 elements (100 MB of fp32) gives GPT-2 and BERT-base a handful of buckets;
// zero2:5e8 restores DeepSpeed's default.
inline constexpr size_t kZeroDefaultBucketElements = kDeepSpeedBucketElements / 20;

enum class Parallel { Ddp, Zero1, Zero2, Fsdp };

struct ParallelConfig {
  Parallel mode = Parallel::Ddp;
  size_t bucket_elements = kZeroDefaultBucketElements;  // ZeRO only
};

// "ddp" | "zero1[:ELEMENTS]" | "zero2[:ELEMENTS]" | "fsdp"; ELEMENTS may be written 2.5e7.
// Throws std::invalid_argument.
ParallelConfig parse_parallel(std::string_view spec);
std::string describe(const ParallelConfig& config);  // "fsdp", "zero2:25000000"
const char* mode_name(Parallel mode);

// An FSDP unit: `tensors` tensors of the model from `first` (registration order; the
// root unit's tensors need not be consecutive: GPT-2's are wte, wpe and ln_f).
struct FsdpUnit {
  std::string name;  // "transformer.h.3", or "root" for the parameters of no layer group
  size_t first = 0, tensors = 0;
  size_t numel = 0;
};

// Unit rule (an auto-wrap policy that wraps every layer group): a tensor belongs to the
// group named by its name up to its first all-digit component ("transformer.h.3.attn.c_attn
// .weight" -> "transformer.h.3", "layer2.0.conv1.weight" -> "layer2.0", "features.10.bias"
// -> "features.10"); tensors without one ("transformer.wte.weight", "fc.bias") form the root
// unit, which comes first (the root FSDP module gathers its parameters before any child's
// forward). Groups are consecutive in registration order for every built-in model.
std::vector<FsdpUnit> fsdp_units(const Model& model);

// Per-rank elements of a flat parameter of `numel` elements over `nranks`: FSDP and the
// replay's ZeRO pad the flat parameter (unit or bucket) with zeros to a multiple of nranks.
size_t shard_elements(size_t numel, int nranks);

// DeepSpeed ZeRO buckets over gradients in backward order: a gradient that would take the
// bucket past `bucket_elements` first flushes it (a gradient larger than the limit gets a
// bucket of its own). Returns [first, end) ranges into backward_order().
std::vector<std::pair<size_t, size_t>> zero_buckets(const std::vector<Gradient>& backward,
                                                    size_t bucket_elements);

// FSDP forward compute per unit, as a fraction of its backward compute (backward computes
// gradients of both inputs and weights: about twice the forward's FLOPs).
inline constexpr double kForwardShareOfBackward = 0.5;

// The plan of one training step. Ddp: plan_model() with `fusion`. Fsdp: forward and
// backward per unit with allgathers (prefetched one unit ahead), reduce_scatters after each
// unit's backward, and Wait actions where compute needs a gathered unit (plan.dependencies).
// Zero1/Zero2: reduce_scatter of gradient buckets (ZeRO-2 as they fill during backward,
// ZeRO-1 at its end), then allgather of the same buckets' updated partitions after the step
// (segment 1). Throws std::invalid_argument for nranks < 1.
ReplayPlan plan_parallel(const Model& model, Dtype dtype, const FusionConfig& fusion,
                         const ParallelConfig& parallel, const ComputeSpec& compute, int nranks);

}  // namespace cb::dl
