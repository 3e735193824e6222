// The collective benchmarks: a blocking and a non-blocking descriptor of each collective
// in the registry (core/coll_spec.hpp), in one list. Every executable shares main.cpp;
// its generated source names its descriptor (harness/bench_name.hpp).
#pragma once

#include <span>
#include <string_view>

#include "harness/bench.hpp"

namespace cb {

std::span<const BenchDesc> collective_benches();
const BenchDesc* find_collective_bench(std::string_view name);  // null: no such benchmark

}  // namespace cb
