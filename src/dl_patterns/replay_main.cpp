// cb_replay: replays the collectives of a training step (a built-in model's gradients or a
// recorded trace) with emulated backward compute. See docs/replay.md.
#include "dl_patterns/replay_runner.hpp"
#include "harness/bench.hpp"

namespace {

// One point (the whole step); a step moves megabytes, so the "large" counts apply.
const cb::BenchDesc kReplayBench{.name = "replay",
                                 .title = "Gradient Replay Test",
                                 .family = cb::Family::Replay,
                                 .default_sizes = {0, 0},
                                 .defaults = {10, 2, 10, 2},
                                 .make_runner = cb::make_replay_runner};

}  // namespace

int main(int argc, char** argv) {
  return cb::bench_main(kReplayBench, argc, argv);
}
