// main() of every point-to-point benchmark (the two-sided ones' descriptors in
// pt2pt/registry.cpp, the one-sided ones' in pt2pt/rma.cpp), compiled once: the
// executable's generated source names its benchmark (harness/bench_name.hpp).
#include "harness/bench_name.hpp"
#include "pt2pt/pt2pt_main.hpp"

int main(int argc, char** argv) {
  return cb::pt2pt_main(cb::kBenchName, argc, argv);
}
