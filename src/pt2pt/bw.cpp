// cb_bw: OMB's osu_bw. A window of non-blocking sends and a 1-byte ack per iteration;
// MB/s = size x window x iterations / 1e6 / time.
#include "harness/runner.hpp"
#include "pt2pt/iterations.hpp"

namespace {
constexpr cb::Pt2ptSpec kSpec{.metric = cb::Pt2ptMetric::Bandwidth,
                              .directions = 1,
                              .uses_window = true,
                              .both_receive = false,
                              .multi_pair = false,
                              .iteration = cb::window_with_ack};
constexpr cb::BenchDesc kDesc{.name = "bw",
                              .title = "Bandwidth Test",
                              .family = cb::Family::Pt2pt,
                              .default_sizes = {1, 4 << 20},
                              .defaults = {100, 10, 20, 2},
                              .pt2pt = &kSpec,
                              .make_runner = cb::make_pt2pt_runner};
}  // namespace

int main(int argc, char** argv) {
  return cb::bench_main(kDesc, argc, argv);
}
