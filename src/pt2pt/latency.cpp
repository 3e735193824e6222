// cb_latency: OMB's osu_latency. One-way latency = ping-pong round trip / 2.
#include "harness/runner.hpp"
#include "pt2pt/iterations.hpp"

namespace {
constexpr cb::Pt2ptSpec kSpec{.metric = cb::Pt2ptMetric::Latency,
                              .directions = 1,
                              .uses_window = false,
                              .both_receive = true,
                              .multi_pair = false,
                              .iteration = cb::ping_pong};
constexpr cb::BenchDesc kDesc{.name = "latency",
                              .title = "Latency Test",
                              .family = cb::Family::Pt2pt,
                              .default_sizes = {0, 4 << 20},
                              .defaults = {10000, 100, 1000, 10},
                              .pt2pt = &kSpec,
                              .make_runner = cb::make_pt2pt_runner};
}  // namespace

int main(int argc, char** argv) {
  return cb::bench_main(kDesc, argc, argv);
}
