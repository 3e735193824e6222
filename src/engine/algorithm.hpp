// The engine's algorithms: one file each under algos/, each a schedule builder plus the
// conditions under which it can run. This table serves listing, forcing by name and the
// tuning-table selection.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "engine/group.hpp"
#include "engine/schedule.hpp"
#include "core/args.hpp"

namespace cb::engine {

struct Algorithm {
  Coll coll;
  std::string_view name;
  std::string_view summary;
  // Why it cannot run these arguments in this group; empty when it can.
  std::string (*cannot_run)(const CollArgs& args, const Group& group);
  // Appends the collective to `schedule` (built for `group`: peers are group ranks).
  void (*build)(Schedule& schedule, const CollArgs& args, const Group& group);
};

std::span<const Algorithm* const> all_algorithms();
const Algorithm* find_algorithm(Coll coll, std::string_view name);
std::string algorithm_names(Coll coll);  // "a, b, c" for messages

}  // namespace cb::engine
