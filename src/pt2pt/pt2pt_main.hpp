// main() of the point-to-point benchmarks, alone in a header: bench_main.cpp needs nothing
// else.
#pragma once

#include <string_view>

namespace cb {

// main() of cb_<name> (pt2pt/bench_main.cpp): runs the benchmark of either table
// (pt2pt/registry.hpp) by name ("put_latency", "multi_lat").
int pt2pt_main(std::string_view name, int argc, char** argv);

}  // namespace cb
