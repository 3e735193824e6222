// The "inside the engine" guard of libcb_engine_preload.so. While a thread is inside the
// engine (creating its state, running or advancing an operation, freeing it), the MPI
// calls the engine and Control make themselves (MPI_Comm_dup, MPI_Allreduce, MPI_Isend ...)
// reach the interposed functions of this library again: those see the guard and forward
// to PMPI unchanged. One global recursive mutex serialises the engine's state between
// threads (MPI_THREAD_MULTIPLE applications).
#pragma once

#include <mutex>

namespace cb::preload {

inline thread_local int t_inside = 0;

inline bool inside_engine() {
  return t_inside > 0;
}

inline std::recursive_mutex& engine_mutex() {
  static std::recursive_mutex mu;
  return mu;
}

class Guard {
 public:
  Guard() : lock_(engine_mutex()) { ++t_inside; }
  ~Guard() { --t_inside; }
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;

 private:
  std::lock_guard<std::recursive_mutex> lock_;
};

}  // namespace cb::preload
