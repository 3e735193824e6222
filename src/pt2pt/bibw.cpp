// cb_bibw: OMB's osu_bibw. Both ranks send a window to each other at once; bytes of both
// directions count: MB/s = 2 x size x window x iterations / 1e6 / time.
#include "harness/runner.hpp"
#include "pt2pt/iterations.hpp"

namespace {
constexpr cb::Pt2ptSpec kSpec{.metric = cb::Pt2ptMetric::Bandwidth,
                              .directions = 2,
                              .uses_window = true,
                              .both_receive = true,
                              .multi_pair = false,
                              .iteration = cb::exchange_window};
constexpr cb::BenchDesc kDesc{.name = "bibw",
                              .title = "Bi-Directional Bandwidth Test",
                              .family = cb::Family::Pt2pt,
                              .default_sizes = {1, 4 << 20},
                              .defaults = {100, 10, 20, 2},
                              .pt2pt = &kSpec,
                              .make_runner = cb::make_pt2pt_runner};
}  // namespace

int main(int argc, char** argv) {
  return cb::bench_main(kDesc, argc, argv);
}
