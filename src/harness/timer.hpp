#pragma once

#include <chrono>

namespace cb {
// Seconds on the monotonic clock (a vDSO read, no system call; a run records its cost in
// the environment's "timer" block).
inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace cb
