// The engine's algorithms: one file each under algos/, each a schedule builder plus the
// conditions under which it can run. This table serves listing, forcing by name and the
// tuning-table selection.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "core/args.hpp"
#include "engine/group.hpp"
#include "engine/schedule.hpp"

namespace cb::engine {

struct Algorithm {
  Coll coll;
  std::string_view name;
  std::string_view summary;
  // Why it cannot run these arguments in this group; empty when it can.
  std::string (*cannot_run)(const CollArgs& args, const Group& group);
  // Appends the collective to `schedule` (built for `group`: peers are group ranks).
  void (*build)(Schedule& schedule, const CollArgs& args, const Group& group);
  // Optional: runs a blocking call to completion without a schedule (null: build one and
  // wait on it). Only for algorithms that use none of the engine's operation slots or tags,
  // so that skipping them keeps every rank's numbering the same: the `mpi` algorithm, whose
  // blocking library call costs less than the non-blocking call plus tests.
  void (*run_blocking)(const CollArgs& args, const Group& group) = nullptr;
};

std::span<const Algorithm* const> all_algorithms();
const Algorithm* find_algorithm(Coll coll, std::string_view name);
std::string algorithm_names(Coll coll);  // "a, b, c" for messages

}  // namespace cb::engine
