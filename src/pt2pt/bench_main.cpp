// main() of the point-to-point benchmarks whose descriptors live in tables (the one-sided
// ones in pt2pt/rma.cpp, OMB's further two-sided ones in pt2pt/registry.cpp): CMake compiles
// this file once per benchmark with CB_BENCH_NAME set ("put_latency", "multi_lat" ...).
#include "pt2pt/pt2pt_main.hpp"

#ifndef CB_BENCH_NAME
#error "CB_BENCH_NAME must name the benchmark (src/pt2pt/CMakeLists.txt sets it)"
#endif

int main(int argc, char** argv) {
  return cb::pt2pt_main(CB_BENCH_NAME, argc, argv);
}
