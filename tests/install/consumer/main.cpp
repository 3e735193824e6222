// Uses collbench's engine as an installed library: lists its algorithms and loads the
// tuning table (CB_TUNING_FILE, else the compiled-in one). Prints one fact per line for
// tests/install/test_install.py.
#include <cstdio>
#include <exception>
#include <string>

#include "config.hpp"
#include "core/types.hpp"
#include "engine/algorithm.hpp"
#include "engine/select.hpp"

int main() {
  try {
    std::printf("version %s package %s\n", CB_VERSION, PACKAGE_VERSION);
    std::printf("tuning_file %s\n", PACKAGE_TUNING_FILE);
    for (const cb::engine::Algorithm* a : cb::engine::all_algorithms())
      std::printf("algorithm %s %s\n", std::string(cb::to_string(a->coll)).c_str(),
                  std::string(a->name).c_str());
    const cb::engine::TuningTable table = cb::engine::TuningTable::load_default();
    std::printf("rules %zu\norigin %s\n", table.rules().size(), table.origin().c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 1;
  }
}
