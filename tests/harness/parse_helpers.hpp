// What the option tests (options_test.cpp, placement_test.cpp) share: a collective's
// descriptor and parse_options() on an argument list, or the UsageError it throws.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/errors.hpp"
#include "harness/options.hpp"

namespace cb::test {

inline constexpr BenchDesc kAllreduceDesc{.name = "allreduce",
                                          .title = "Allreduce Latency Test",
                                          .family = Family::Collective,
                                          .default_sizes = {4, 64 << 20},
                                          .defaults = {1000, 100, 100, 10}};

// The options of `cb_test ARGS...` for benchmark `d`.
inline Options parse(const BenchDesc& d, std::vector<const char*> args) {
  args.insert(args.begin(), "cb_test");
  return parse_options(d, static_cast<int>(args.size()), args.data()).options;
}

// The message parse() throws (a UsageError), or "(no error)".
inline std::string error_of(const BenchDesc& d, std::vector<const char*> args) {
  try {
    parse(d, std::move(args));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace cb::test
