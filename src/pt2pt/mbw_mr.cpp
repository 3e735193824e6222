// cb_mbw_mr: OMB's osu_mbw_mr. Pairs r <-> r + pairs stream windows at the same time;
// aggregate MB/s and messages/s over the pairs (sender times averaged, as OMB).
#include "harness/runner.hpp"
#include "pt2pt/iterations.hpp"

namespace {
constexpr cb::Pt2ptSpec kSpec{.metric = cb::Pt2ptMetric::MessageRate,
                              .directions = 1,
                              .uses_window = true,
                              .both_receive = false,
                              .multi_pair = true,
                              .iteration = cb::window_with_ack};
constexpr cb::BenchDesc kDesc{.name = "mbw_mr",
                              .title = "Multiple Bandwidth / Message Rate Test",
                              .family = cb::Family::Pt2pt,
                              .default_sizes = {1, 4 << 20},
                              .defaults = {100, 10, 20, 2},
                              .pt2pt = &kSpec,
                              .make_runner = cb::make_pt2pt_runner};
}  // namespace

int main(int argc, char** argv) {
  return cb::bench_main(kDesc, argc, argv);
}
