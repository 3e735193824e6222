// Mixture-of-Experts layer stacks under expert parallelism, as replay plans: the token
// exchanges (alltoallv of uneven counts) of one training step, with counts drawn from a
// seeded router so that every rank builds the same matrices without communicating. Pure
// logic; the rules and their sources are in docs/replay.md ("Mixture of Experts").
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/types.hpp"
#include "core/vcounts.hpp"
#include "dl_patterns/replay_plan.hpp"

namespace cb::dl {

// The MoE layers of a published model: what decides the size of the token exchanges.
struct MoeModel {
  std::string name;  // registry key, e.g. "mixtral-8x7b"
  std::string description;
  int layers = 0;             // MoE layers (each one dispatch and one combine per pass)
  size_t hidden = 0;          // model dimension: elements per token
  int experts = 0;            // experts per MoE layer
  int top_k = 0;              // experts each token is routed to
  size_t default_tokens = 0;  // tokens per rank per step (--tokens)
};

// nullptr if unknown; the lookup ignores case.
const MoeModel* find_moe_model(std::string_view name);
std::vector<std::string> moe_model_names();  // mixtral-8x7b, switch-base-8

// Tokens each rank sends to each rank in MoE layer `layer` (row-major [from][to]): each of
// the `tokens` tokens of rank `from` picks top_k distinct experts, drawn one after another
// with probability proportional to the layer's expert popularity:
//   uniform: every expert alike;
//   zipf:S,SEED: the expert ranked k is weighted 1/k^S, the ranking a permutation drawn
//     from SEED and the layer (hot experts differ between layers, are the same for all ranks);
//   random:SEED: weights uniform in [0, 1) drawn from SEED and the layer.
// The draws are seeded by (SEED, layer, rank, token): the same on every rank. Expert e lives
// on rank e % nranks. Throws std::invalid_argument when nranks exceeds the experts.
std::vector<size_t> route_tokens(const MoeModel& model, const CountsPattern& router, int layer,
                                 size_t tokens, int nranks);

struct MoeConfig {
  const MoeModel* model = nullptr;
  size_t tokens = 0;     // per rank per step
  CountsPattern router;  // --counts
};

// Forward compute as a share of backward (inputs' and weights' gradients: about 2x the FLOPs).
inline constexpr double kMoeForwardShare = 0.5;

// One training step per rank `rank` of `nranks`: for each MoE layer, forward dispatch
// (alltoallv of the routed tokens to their experts' ranks) then combine (the transposed
// exchange back), with the expert compute between them; backward in reverse layer order,
// combine's gradient first (the dispatch matrix) then dispatch's (the transposed one). Each
// exchange waits for the one before (no overlap: a layer's compute needs its tokens).
// Compute with us-per-mb:X (trace: kModelDefaultUsPerMiB): X us per MiB of tokens a rank
// computes on (its own tokens for the dense part, the tokens its experts received for the
// experts), forward kMoeForwardShare of backward; ranks with hot experts compute longer.
// Every message carries its count matrix. Throws std::invalid_argument for bad sizes.
ReplayPlan plan_moe(const MoeConfig& config, Dtype dtype, const ComputeSpec& compute, int nranks,
                    int rank);

// "# Model: ..." details: layers, experts, tokens and the routing's imbalance.
std::string describe(const MoeConfig& config, int nranks);

}  // namespace cb::dl
