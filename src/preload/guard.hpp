// The "inside the engine" guard of libcb_engine_preload.so. While a thread is inside the
// engine (creating its state, running or advancing an operation, freeing it), the MPI
// calls the engine and Control make themselves (MPI_Comm_dup, MPI_Allreduce, MPI_Isend ...)
// reach the interposed functions of this library again: those see the guard and forward
// to PMPI unchanged. One global recursive mutex serialises the engine's running
// operations between threads (MPI_THREAD_MULTIPLE applications); it is taken per poll and
// never held across anything that waits for another process. Creating an engine, which
// is collective, marks the thread inside the engine without taking it (Inside): the new
// communicator is not yet visible to any other thread.
#pragma once

#include <mutex>

namespace cb::preload {

inline thread_local int t_inside = 0;

inline bool inside_engine() {
  return t_inside > 0;
}

inline std::recursive_mutex& engine_mutex() {
  static auto* mu = new std::recursive_mutex;  // never destroyed: a background thread
  return *mu;                                  // (BlockedProgress) may use it at exit
}

// The "inside the engine" mark alone.
class Inside {
 public:
  Inside() { ++t_inside; }
  ~Inside() { --t_inside; }
  Inside(const Inside&) = delete;
  Inside& operator=(const Inside&) = delete;
};

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
