// The engine's algorithms: one file each under algos/, each a schedule builder plus the
// conditions under which it can run. This table serves listing, forcing by name and the
// tuning-table selection.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "core/args.hpp"
#include "engine/comm.hpp"
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
  // Its schedule can run again unchanged (Schedule::rearm: only transfers, local copies and
  // renumberable Poll steps, nothing posted while building): the engine's persistent
  // collectives build it once at init and re-arm it at every start.
  bool rerunnable = false;
};

// Takes the next operation's tag and number from `comm` (the same on every rank) and builds
// `algo`'s schedule of `args` for `group` into `s`; returns the tag. The one way the
// engine backend and the preload make an operation. An in-place reduce_scatter leaves
// every block but block 0 (the result) of the rank's buffer as it was, as MPI libraries
// do and programs check (mpi4py's tests): some algorithms build the result in the rank's
// own block, which is saved first and put back after.
int build_operation(Schedule& s, const Algorithm& algo, const CollArgs& args, const Group& group,
                    Comm& comm);

std::span<const Algorithm* const> all_algorithms();
const Algorithm* find_algorithm(Coll coll, std::string_view name);
std::string algorithm_names(Coll coll);  // "a, b, c" for messages

}  // namespace cb::engine
