// main() of every collective executable; CMake sets CB_BENCH_DESC (e.g. kIallreduceBench).
#include "collective/benches.hpp"

int main(int argc, char** argv) {
  return cb::bench_main(cb::CB_BENCH_DESC, argc, argv);
}
