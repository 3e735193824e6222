// cb_replay's Runner: replays the collectives of a training step (a model's gradients or
// a recorded trace) on a backend, with emulated backward compute, and reports step time,
// exposed communication, overlap, bus bandwidth and a per-message-size table.
#pragma once

#include <memory>

#include "harness/runner.hpp"

namespace cb {

std::unique_ptr<Runner> make_replay_runner(const RunContext& rc);

}  // namespace cb
