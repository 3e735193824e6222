// Running a schedule: non-blocking progress (test) and waiting (spin, then yield).
#pragma once

#include <sched.h>

#include <mutex>

#include "engine/comm.hpp"
#include "engine/executor.hpp"
#include "engine/schedule.hpp"

namespace cb::engine {

class Execution {
 public:
  // Enlists the schedule's operation in comm's window (Comm::admit): it starts once the
  // operation kOpWindow before it has completed here.
  Execution(Schedule& schedule, Comm& comm, Executor& executor, int tag);
  ~Execution();
  Execution(const Execution&) = delete;
  Execution& operator=(const Execution&) = delete;
  // Advances as far as it can without blocking; true once every round has completed.
  bool test();
  bool done() const { return round_ == sched_.rounds(); }
  // test(), unless another thread is inside test() right now (Comm::admit).
  void advance_if_idle();

 private:
  bool advance();     // test() with mu_ held
  bool run_rounds();  // the rounds, once admitted
  Schedule& sched_;
  Comm& comm_;
  Executor& exec_;
  int tag_;
  std::mutex mu_;          // test() from the owner and from a newer operation's admit()
  bool admitted_ = false;  // the window let it start
  bool retired_ = false;   // completed and taken out of the window
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
