// The point-to-point benchmarks, as descriptor tables: the two-sided ones
// (pt2pt/registry.cpp) and the one-sided ones (pt2pt/rma.cpp).
#pragma once

#include <string_view>
#include <vector>

#include <memory>

#include "harness/bench.hpp"
#include "harness/runner.hpp"
#include "pt2pt/pt2pt_main.hpp"

namespace cb {

// OMB's two-sided benchmarks (latency, bw, bibw, mbw_mr, multi_lat, the persistent latency,
// bw and bibw, partitioned_latency, ...) and nccl-tests' sendrecv and hypercube.
const std::vector<const BenchDesc*>& two_sided_benches();
// Any benchmark of either table by name ("put_latency", "multi_lat"), or nullptr.
const BenchDesc* find_pt2pt_bench(std::string_view name);
// nccl-tests' sendrecv_perf and hypercube_perf (pt2pt/exchange.cpp).
std::unique_ptr<Runner> make_exchange_runner(const RunContext& rc);

}  // namespace cb
