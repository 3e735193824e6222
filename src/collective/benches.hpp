// The collective benchmarks: one spec per collective, a blocking and a non-blocking
// descriptor each. main.cpp is compiled once per executable with CB_BENCH_DESC naming one.
#pragma once

#include "collective/coll_spec.hpp"
#include "harness/bench.hpp"

namespace cb {

extern const CollSpec kAllreduceSpec, kBcastSpec, kAlltoallSpec;
extern const BenchDesc kAllreduceBench, kIallreduceBench;
extern const BenchDesc kBcastBench, kIbcastBench;
extern const BenchDesc kAlltoallBench, kIalltoallBench;

}  // namespace cb
