// Running a schedule: non-blocking progress (test) and waiting (spin, then yield).
#pragma once

#include <sched.h>

#include "engine/comm.hpp"
#include "engine/executor.hpp"
#include "engine/schedule.hpp"

namespace cb::engine {

class Execution {
 public:
  Execution(Schedule& schedule, Comm& comm, Executor& executor, int tag)
      : sched_(schedule), comm_(comm), exec_(executor), tag_(tag) {}
  // Advances as far as it can without blocking; true once every round has completed.
  bool test();
  bool done() const { return round_ == sched_.rounds(); }

 private:
  Schedule& sched_;
  Comm& comm_;
  Executor& exec_;
  int tag_;
  size_t round_ = 0;
  size_t started_ = 0;  // steps of the current round started so far
};

// Polls until `done()` returns true. Spin mode polls back to back for a while, then
// yields between polls; Yield mode (more ranks than cores) yields from the start.
template <typename Poll>
void wait_until(Poll&& done, WaitMode mode) {
  constexpr int kSpinPolls = 2000;
  for (int polls = 0; !done(); ++polls)
    if (mode == WaitMode::Yield || polls >= kSpinPolls) sched_yield();
}

}  // namespace cb::engine
