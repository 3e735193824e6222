// The timing loops of the collective families (harness/runner.hpp's Runner): blocking
// (OMB's osu_<coll>) and non-blocking with overlap (OMB's osu_i<coll>).
#pragma once

#include <memory>

#include "harness/runner.hpp"

namespace cb {

std::unique_ptr<Runner> make_collective_runner(const RunContext& rc);
std::unique_ptr<Runner> make_overlap_runner(const RunContext& rc);

}  // namespace cb
