// main() of every collective executable, compiled once: the executable's generated source
// names its benchmark (harness/bench_name.hpp, e.g. "iallreduce").
#include <cstdio>

#include "collective/benches.hpp"
#include "core/errors.hpp"
#include "harness/bench_name.hpp"

int main(int argc, char** argv) {
  const cb::BenchDesc* desc = cb::find_collective_bench(cb::kBenchName);
  if (!desc) {
    std::fprintf(stderr, "collbench: no collective benchmark named %s\n", cb::kBenchName);
    return cb::kExitUsage;
  }
  return cb::bench_main(*desc, argc, argv);
}
