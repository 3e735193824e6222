// The command line of every benchmark family: parse_options() with the real descriptors.
// Input: the first byte picks the benchmark ('p' latency, 'r' replay, any other byte the
// collective of that index modulo their number), the rest is argv, one argument per line.
// Expected: UsageError.
// Findings: any other exception, or accepted options that the run cannot use: options that
// do not serialise to the JSON every run writes, a size range with MIN > MAX, a time limit
// the watchdog's clock cannot hold.
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "collective/benches.hpp"
#include "core/errors.hpp"
#include "fuzz_util.hpp"
#include "harness/options.hpp"

namespace {

using namespace cb;

constexpr BenchDesc kLatency{.name = "latency",
                             .title = "Latency Test",
                             .family = Family::Pt2pt,
                             .default_sizes = {0, 4 << 20},
                             .defaults = {10000, 100, 1000, 10}};
constexpr BenchDesc kReplay{.name = "replay",
                            .title = "Gradient Replay Test",
                            .family = Family::Replay,
                            .default_sizes = {0, 0},
                            .defaults = {10, 2, 10, 2}};

// 'p': point-to-point (latency), 'r': replay, any other byte a collective by its index in
// collective_benches() (which grows: seeds name the point-to-point and replay by letter).
const BenchDesc& pick(uint8_t byte) {
  if (byte == 'p') return kLatency;
  if (byte == 'r') return kReplay;
  const auto colls = collective_benches();
  return colls[byte % colls.size()];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const BenchDesc& desc = pick(data[0]);
  std::vector<std::string> args{"cb_" + std::string(desc.name)};
  std::string arg;
  for (size_t i = 1; i < size; ++i) {
    if (data[i] == '\n') {
      args.push_back(arg);
      arg.clear();
    } else {
      arg += static_cast<char>(data[i]);
    }
  }
  if (size > 1) args.push_back(arg);
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());

  ParseOutcome out;
  try {
    out = parse_options(desc, static_cast<int>(argv.size()), argv.data());
  } catch (const UsageError&) {
    return 0;
  }
  if (out.early_exit) return 0;
  const Options& o = out.options;
  // bench_main() compares the options of all ranks as JSON text, and every run writes them.
  try {
    (void)nlohmann::json({{"options", o}, {"argv", o.argv}}).dump();
  } catch (const nlohmann::json::exception& e) {
    fuzz::finding(std::string("accepted options do not serialise: ") + e.what());
  }
  if (o.sizes.min > o.sizes.max) fuzz::finding("message size MIN > MAX");
  if (o.iterations < 1 || o.iterations_large < 1 || o.warmup < 0 || o.warmup_large < 0)
    fuzz::finding("iteration counts out of range");
  // The watchdog converts the limit to steady_clock ticks.
  using Ticks = std::chrono::steady_clock::duration;
  if (!(o.time_limit_s >= 0) || std::chrono::duration<double>(o.time_limit_s) >
                                    std::chrono::duration<double>(Ticks::max()) / 2)
    fuzz::finding("--time-limit " + std::to_string(o.time_limit_s) +
                  " s does not fit the watchdog's clock");
  for (double p : o.tail_percentiles)
    if (!(p > 0 && p <= 100)) fuzz::finding("percentile " + std::to_string(p) + " accepted");
  return 0;
}
