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
  // Optional: the operation on the communicator's small-message slots (the `small`
  // algorithms, shm/small_slots.hpp), without its sequence number. With it, a blocking
  // call may skip the schedule (start_small).
  SmallOp (*small)(const CollArgs& args, const Group& group) = nullptr;
};

// Takes the next operation's tag and number from `comm` (the same on every rank) and builds
// `algo`'s schedule of `args` for `group` into `s`; returns the tag. The one way the
// engine backend and the preload make an operation. An in-place reduce_scatter leaves
// every block but block 0 (the result) of the rank's buffer as it was, as MPI libraries
// do and programs check (mpi4py's tests): some algorithms build the result in the rank's
// own block, which is saved first and put back after.
int build_operation(Schedule& s, const Algorithm& algo, const CollArgs& args, const Group& group,
                    Comm& comm);

// A blocking call of a small-path algorithm with no operation of `comm` pending on this
// rank: takes the operation's number as build_operation would (so that every rank's
// numbers stay alike whichever way it runs) and its sequence number, fills *op and returns
// true; the caller advances op to completion, with no schedule, execution or allocation.
// False (nothing taken) when `algo` has no small form or another operation is pending:
// then build_operation, whose schedule waits its turn (Schedule::exclusive).
bool start_small(SmallOp& op, const Algorithm& algo, const CollArgs& args, const Group& group,
                 Comm& comm);

std::span<const Algorithm* const> all_algorithms();
const Algorithm* find_algorithm(Coll coll, std::string_view name);
std::string algorithm_names(Coll coll);  // "a, b, c" for messages

}  // namespace cb::engine
