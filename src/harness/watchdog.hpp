// --time-limit: a thread that ends the process if one message size runs too long, so a
// hang becomes a clear message and exit status 4 instead of a stuck job.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace cb {

class Watchdog {
 public:
  // on_expire gets the armed description; afterwards the process exits with
  // kExitTimeLimit. limit_s <= 0 disables the watchdog (no thread).
  Watchdog(double limit_s, std::function<void(const std::string&)> on_expire);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void arm(std::string what);  // starts the clock for one phase
  void disarm();
  double limit_s() const { return limit_s_; }

 private:
  void loop();

  double limit_s_;
  std::function<void(const std::string&)> on_expire_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = false;
  bool stop_ = false;
  std::chrono::steady_clock::time_point deadline_;
  std::string what_;
  std::thread thread_;
};

}  // namespace cb
