#include "harness/watchdog.hpp"

#include <cstdlib>

#include "core/errors.hpp"

namespace cb {

Watchdog::Watchdog(double limit_s, std::function<void(const std::string&)> on_expire)
    : limit_s_(limit_s), on_expire_(std::move(on_expire)) {
  if (limit_s_ > 0) thread_ = std::thread([this] { loop(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Watchdog::arm(std::string what) {
  if (limit_s_ <= 0) return;
  {
    std::lock_guard lock(mu_);
    what_ = std::move(what);
    deadline_ = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(limit_s_));
    armed_ = true;
  }
  cv_.notify_all();
}

void Watchdog::disarm() {
  if (limit_s_ <= 0) return;
  std::lock_guard lock(mu_);
  armed_ = false;
}

void Watchdog::loop() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    if (!armed_) {
      cv_.wait(lock);
      continue;
    }
    if (cv_.wait_until(lock, deadline_) == std::cv_status::timeout && armed_ && !stop_ &&
        std::chrono::steady_clock::now() >= deadline_) {
      const std::string what = what_;
      lock.unlock();
      on_expire_(what);
      std::_Exit(kExitTimeLimit);
    }
  }
}

}  // namespace cb
