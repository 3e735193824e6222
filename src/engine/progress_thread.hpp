// An optional background thread that advances non-blocking engine operations while the
// caller computes (--progress-thread). Without it, operations advance only inside test()
// and wait(), as MPI libraries without asynchronous progress do. It needs
// MPI_THREAD_MULTIPLE, and it competes with the caller for a core: what it buys in
// overlap is measured by the overlap benchmarks, not assumed.
#pragma once

#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/execution.hpp"

namespace cb::engine {

// One operation handed to the thread: its schedule, its execution, and the outcome.
struct Task {
  Schedule schedule;
  std::unique_ptr<Execution> execution;
  std::atomic<bool> done{false};
  std::exception_ptr error;  // set before done when the execution threw
};

class ProgressThread {
 public:
  explicit ProgressThread(WaitMode mode);
  ~ProgressThread();  // finishes the operations handed over, then joins
  ProgressThread(const ProgressThread&) = delete;
  ProgressThread& operator=(const ProgressThread&) = delete;

  void submit(std::shared_ptr<Task> task);

 private:
  void loop();

  WaitMode mode_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::shared_ptr<Task>> incoming_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace cb::engine
