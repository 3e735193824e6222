#include "engine/algorithm.hpp"

#include <array>

#include "engine/algos/algos.hpp"

namespace cb::engine {

std::span<const Algorithm* const> all_algorithms() {
  static constexpr const Algorithm* kAll[] = {&kAllreduceRecursiveDoubling,
                                              &kAllreduceRabenseifner,
                                              &kAllreduceRing,
                                              &kAllreduceShmFlat,
                                              &kAllreduceShm,
                                              &kAllreduceCma,
                                              &kAllreduceHierarchical,
                                              &kBcastBinomial,
                                              &kBcastScatterAllgather,
                                              &kBcastChain,
                                              &kBcastShm,
                                              &kBcastCma,
                                              &kBcastHierarchical,
                                              &kAlltoallPairwise,
                                              &kAlltoallBruck,
                                              &kAlltoallLinear,
                                              &kAlltoallShm,
                                              &kAllgatherRing,
                                              &kAllgatherRecursiveDoubling,
                                              &kAllgatherBruck,
                                              &kAllgatherShm,
                                              &kReduceScatterRing,
                                              &kReduceScatterRecursiveHalving,
                                              &kReduceScatterPairwise,
                                              &kReduceScatterShm,
                                              &kReduceBinomial,
                                              &kReduceRabenseifner,
                                              &kReduceShm,
                                              &kReduceCma,
                                              &kBarrierDissemination,
                                              &kBarrierShm,
                                              &kAlltoallvPairwise,
                                              &kAlltoallvShm,
                                              &kAllreduceMpi,
                                              &kBcastMpi,
                                              &kAlltoallMpi,
                                              &kAllgatherMpi,
                                              &kReduceScatterMpi,
                                              &kReduceMpi,
                                              &kBarrierMpi,
                                              &kAlltoallvMpi};
  return kAll;
}

const Algorithm* find_algorithm(Coll coll, std::string_view name) {
  for (const Algorithm* a : all_algorithms())
    if (a->coll == coll && a->name == name) return a;
  return nullptr;
}

std::string algorithm_names(Coll coll) {
  std::string out;
  for (const Algorithm* a : all_algorithms())
    if (a->coll == coll) out += (out.empty() ? "" : ", ") + std::string(a->name);
  return out;
}

}  // namespace cb::engine
