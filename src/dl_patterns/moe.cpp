#include "dl_patterns/moe.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <stdexcept>

namespace cb::dl {
namespace {

using Kind = ReplayAction::Kind;

// Shapes from the models' configurations (Hugging Face config.json):
// Mixtral-8x7B: num_hidden_layers 32 (every layer MoE), hidden_size 4096,
//   num_local_experts 8, num_experts_per_tok 2; 4096 tokens = one sequence of its context.
// Switch-Base-8 (google/switch-base-8, T5-base with every other FFN sparse): 6 encoder + 6
//   decoder sparse layers, d_model 768, 8 experts, top-1; 4096 tokens = 8 x 512.
const std::vector<MoeModel>& registry() {
  static const std::vector<MoeModel> models = {
      {"mixtral-8x7b",
       "Mixtral-8x7B MoE layers: 32 layers, hidden 4096, 8 experts, top-2 (Hugging Face config)",
       32, 4096, 8, 2, 4096},
      {"switch-base-8",
       "Switch-Base-8 MoE layers: 12 sparse layers (6 encoder, 6 decoder), d_model 768, 8 "
       "experts, top-1 (google/switch-base-8)",
       12, 768, 8, 1, 4096},
  };
  return models;
}

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::vector<double> popularity(const CountsPattern& router, int layer, int experts) {
  const auto e = static_cast<size_t>(experts);
  const uint64_t stream = 0x4D6F45ull + static_cast<uint64_t>(layer);  // "MoE" + layer
  std::vector<double> w(e, 1.0);
  if (router.kind == CountsPattern::Kind::Zipf) {
    std::vector<size_t> order(e);
    std::iota(order.begin(), order.end(), size_t{0});
    for (size_t i = e - 1; i > 0; --i)
      std::swap(order[i], order[static_cast<size_t>(seeded_unit(router.seed, stream, i) *
                                                    static_cast<double>(i + 1))]);
    for (size_t k = 0; k < e; ++k)
      w[order[k]] = 1.0 / std::pow(static_cast<double>(k + 1), router.skew);
  } else if (router.kind == CountsPattern::Kind::Random) {
    // A floor keeps every expert reachable, as a router's softmax never gives exactly 0.
    for (size_t k = 0; k < e; ++k) w[k] = 1e-3 + seeded_unit(router.seed, stream, k);
  }
  return w;
}

}  // namespace

const MoeModel* find_moe_model(std::string_view name) {
  for (const MoeModel& m : registry())
    if (same_name(m.name, name)) return &m;
  return nullptr;
}

std::vector<std::string> moe_model_names() {
  std::vector<std::string> names;
  for (const MoeModel& m : registry()) names.push_back(m.name);
  return names;
}

std::vector<size_t> route_tokens(const MoeModel& model, const CountsPattern& router, int layer,
                                 size_t tokens, int nranks) {
  if (nranks < 1 || nranks > model.experts)
    throw std::invalid_argument(model.name + " has " + std::to_string(model.experts) +
                                " experts per layer: expert parallelism over " +
                                std::to_string(nranks) + " ranks needs 1 to " +
                                std::to_string(model.experts) + " ranks");
  const auto n = static_cast<size_t>(nranks);
  const std::vector<double> w = popularity(router, layer, model.experts);
  std::vector<size_t> counts(n * n, 0);
  std::vector<double> left(w.size());
  for (size_t from = 0; from < n; ++from) {
    const uint64_t stream = (static_cast<uint64_t>(layer) << 32) ^ (from << 8) ^ 0x52ull;
    for (size_t t = 0; t < tokens; ++t) {
      left = w;
      for (int k = 0; k < model.top_k; ++k) {  // k-th choice among the experts not yet taken
        const double total = std::accumulate(left.begin(), left.end(), 0.0);
        double x = seeded_unit(router.seed, stream, t * 16 + static_cast<size_t>(k)) * total;
        size_t e = 0;
        while (e + 1 < left.size() && (left[e] == 0 || x >= left[e])) {
          x -= left[e];
          ++e;
        }
        while (left[e] == 0) --e;  // rounding ran past the last expert still open
        left[e] = 0;
        ++counts[from * n + e % n];
      }
    }
  }
  return counts;
}

ReplayPlan plan_moe(const MoeConfig& config, Dtype dtype, const ComputeSpec& compute, int nranks,
                    int rank) {
  const MoeModel& model = *config.model;
  if (config.tokens == 0) throw std::invalid_argument("--tokens must be at least 1");
  const double us_per_mib = compute.mode == ComputeSpec::Mode::PerMiB  ? compute.us_per_mib
                            : compute.mode == ComputeSpec::Mode::Trace ? kModelDefaultUsPerMiB
                                                                       : 0.0;
  const size_t width = dtype_size(dtype);
  const size_t token_bytes = model.hidden * width;
  ReplayPlan p;
  p.dependencies = true;
  double clock = 0;
  const auto compute_on = [&](size_t tokens, double share) {
    const double us =
        share * us_per_mib * static_cast<double>(tokens * token_bytes) / static_cast<double>(kMiB);
    if (us > 0) p.actions.push_back({Kind::Compute, us, 0});
    clock += us;
  };
  // Exchange of `m` (tokens): one alltoallv of hidden-sized rows, then wait for it.
  const auto exchange = [&](const std::shared_ptr<const CountMatrix>& m, const std::string& name,
                            int layer) {
    ReplayMessage msg;
    msg.coll = Coll::Alltoallv;
    msg.dtype = dtype;
    msg.op = Op::Sum;
    msg.name = name + "[" + std::to_string(layer) + "]";
    msg.record = static_cast<size_t>(layer);
    msg.ready_us = clock;
    // Elements per peer on average (the same for a dispatch and its reverse): every rank
    // sends top_k x its tokens x hidden elements in a dispatch.
    msg.count = m->mean();
    msg.counts = m;
    p.messages.push_back(std::move(msg));
    p.actions.push_back({Kind::Launch, 0, p.messages.size() - 1});
    p.actions.push_back({Kind::Wait, 0, p.messages.size() - 1});
  };
  std::vector<std::shared_ptr<const CountMatrix>> dispatch, combine;
  for (int l = 0; l < model.layers; ++l) {
    std::vector<size_t> tokens = route_tokens(model, config.router, l, config.tokens, nranks);
    for (size_t& c : tokens) c *= model.hidden;  // rows of `hidden` elements
    dispatch.push_back(std::make_shared<const CountMatrix>(std::move(tokens), nranks));
    combine.push_back(std::make_shared<const CountMatrix>(dispatch.back()->transposed()));
  }
  const auto mine = [&](int l) {  // tokens this rank's experts compute on in layer l
    return dispatch[static_cast<size_t>(l)]->recv_total(rank) / model.hidden;
  };
  for (int l = 0; l < model.layers; ++l) {
    compute_on(config.tokens, kMoeForwardShare);  // attention and router of its own tokens
    exchange(dispatch[static_cast<size_t>(l)], "moe.fwd_dispatch", l);
    compute_on(mine(l), kMoeForwardShare);  // its experts
    exchange(combine[static_cast<size_t>(l)], "moe.fwd_combine", l);
  }
  for (int l = model.layers; l-- > 0;) {
    // Output gradients go to the experts that produced them (the dispatch's matrix), the
    // experts' input gradients come back (the combine's).
    exchange(dispatch[static_cast<size_t>(l)], "moe.bwd_combine", l);
    compute_on(mine(l), 1.0);
    exchange(combine[static_cast<size_t>(l)], "moe.bwd_dispatch", l);
    compute_on(config.tokens, 1.0);
  }
  p.actions.push_back({Kind::WaitAll, 0, 0});
  p.segment_end_us = {clock};
  p.segments = 1;
  return p;
}

std::string describe(const MoeConfig& config, int nranks) {
  const MoeModel& m = *config.model;
  double worst = 1, sum = 0;
  for (int l = 0; l < m.layers; ++l) {
    const CountMatrix c(route_tokens(m, config.router, l, config.tokens, nranks), nranks);
    worst = std::max(worst, c.imbalance());
    sum += c.imbalance();
  }
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%s; expert parallelism over %d ranks (expert e on rank e %% %d), %zu tokens per "
                "rank, router %s: the busiest rank receives %.2fx the average tokens (mean over "
                "layers), %.2fx at worst",
                m.description.c_str(), nranks, nranks, config.tokens, config.router.str().c_str(),
                m.layers ? sum / m.layers : 1.0, worst);
  return buf;
}

}  // namespace cb::dl
