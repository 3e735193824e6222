// main() of every collective executable; CMake sets CB_BENCH_NAME (e.g. "iallreduce").
#include <cstdio>

#include "collective/benches.hpp"
#include "core/errors.hpp"

int main(int argc, char** argv) {
  const cb::BenchDesc* desc = cb::find_collective_bench(CB_BENCH_NAME);
  if (!desc) {
    std::fprintf(stderr, "collbench: no collective benchmark named %s\n", CB_BENCH_NAME);
    return cb::kExitUsage;
  }
  return cb::bench_main(*desc, argc, argv);
}
