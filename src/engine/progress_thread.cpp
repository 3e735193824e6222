#include "engine/progress_thread.hpp"

#include <sched.h>

#include <algorithm>

namespace cb::engine {

ProgressThread::ProgressThread(WaitMode mode) : mode_(mode), thread_([this] { loop(); }) {}

ProgressThread::~ProgressThread() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void ProgressThread::submit(std::shared_ptr<Task> task) {
  {
    std::lock_guard lock(mu_);
    incoming_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void ProgressThread::loop() {
  std::vector<std::shared_ptr<Task>> active;
  int idle_polls = 0;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      if (active.empty()) cv_.wait(lock, [&] { return stop_ || !incoming_.empty(); });
      if (stop_ && active.empty() && incoming_.empty()) return;
      active.insert(active.end(), incoming_.begin(), incoming_.end());
      incoming_.clear();
    }
    bool finished_any = false;
    for (auto& task : active) {
      try {
        if (!task->execution->test()) continue;
      } catch (...) {
        task->error = std::current_exception();
      }
      task->done.store(true, std::memory_order_release);
      task.reset();
      finished_any = true;
    }
    std::erase(active, nullptr);
    // Poll back to back while operations move; yield when crowded or when nothing moved
    // for a while, so that the caller's computation keeps its core.
    idle_polls = finished_any ? 0 : idle_polls + 1;
    if (mode_ == WaitMode::Yield || idle_polls > 64) sched_yield();
  }
}

}  // namespace cb::engine
