#include "engine/execution.hpp"

namespace cb::engine {

Execution::Execution(Schedule& schedule, Comm& comm, Executor& executor, int tag)
    : sched_(schedule), comm_(comm), exec_(executor), tag_(tag) {
  comm_.enlist(sched_.op(), this);
}

Execution::~Execution() {
  if (!retired_) comm_.retire(sched_.op());  // abandoned (an error): out of the window
}

void Execution::advance_if_idle() {
  std::unique_lock lock(mu_, std::try_to_lock);
  if (lock.owns_lock()) advance();
}

bool Execution::test() {
  std::lock_guard lock(mu_);
  return advance();
}

bool Execution::advance() {
  if (!admitted_ && !(admitted_ = comm_.admit(sched_.op(), sched_.exclusive()))) return false;
  if (!run_rounds()) return false;
  if (!retired_) {
    retired_ = true;
    comm_.retire(sched_.op());
  }
  return true;
}

bool Execution::run_rounds() {
  while (round_ < sched_.rounds()) {
    const auto steps = sched_.round(round_);
    // Start the round's steps in order; local work must finish before the next step.
    for (; started_ < steps.size(); ++started_) {
      Step& s = steps[started_];
      if (s.kind == StepKind::Send || s.kind == StepKind::Recv) {
        comm_.transport(s.peer, sched_.mem()).post(s, tag_);
        continue;
      }
      if (s.kind == StepKind::Poll) {
        if (!s.poll->advance()) return false;  // waiting on peers: resume here next time
        continue;
      }
      if (!s.started) {
        s.started = true;
        if (exec_.start(s)) continue;
      }
      if (!exec_.test(s)) return false;  // asynchronous local work still running
    }
    // Test every transfer of the round, not just up to the first unfinished one: a send
    // whose ring is full completes only once this rank drains the peer's messages too.
    bool finished = true;
    for (Step& s : steps) {
      if (s.done || s.kind == StepKind::Reduce || s.kind == StepKind::Copy ||
          s.kind == StepKind::Poll)
        continue;
      if (comm_.transport(s.peer, sched_.mem()).test(s))
        s.done = true;
      else
        finished = false;
    }
    if (!finished) return false;
    ++round_;
    started_ = 0;
  }
  return true;
}

}  // namespace cb::engine
