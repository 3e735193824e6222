// Every algorithm the engine has (defined one per file in this folder).
#pragma once

#include "collective/engine/algorithm.hpp"

namespace cb::engine {

extern const Algorithm kAllreduceRecursiveDoubling;
extern const Algorithm kAllreduceRabenseifner;
extern const Algorithm kAllreduceRing;
extern const Algorithm kBcastBinomial;
extern const Algorithm kBcastScatterAllgather;
extern const Algorithm kBcastChain;
extern const Algorithm kAlltoallPairwise;
extern const Algorithm kAlltoallBruck;
extern const Algorithm kAlltoallLinear;

}  // namespace cb::engine
