// The "inside the engine" guard of libcb_engine_preload.so. While a thread is inside the
// engine (creating its state, running or advancing an operation, freeing it), the MPI
// calls the engine and Control make themselves (MPI_Comm_dup, MPI_Allreduce, MPI_Isend ...)
// reach the interposed functions of this library again: those see the guard and forward
// to PMPI unchanged. One global recursive mutex serialises the engine's running
// operations between threads (MPI_THREAD_MULTIPLE applications); it is taken per poll and
// never held across anything that waits for another process. Creating an engine, which
// is collective, marks the thread inside the engine without taking it (Inside): the new
// communicator is not yet visible to any other thread.
//
// Lock order: the engine mutex, then MPI's own lock (a thread holding the mutex calls MPI:
// the engine's transports, MPI_Grequest_start/complete). MPI calls back into this library
// with its lock held (MPICH 5 runs a generalized request's free function inside MPI_Test,
// an attribute's delete function inside MPI_Comm_free, the poll and wait functions inside
// its progress): a callback must never wait for the mutex, or a thread holding it and
// calling MPI deadlocks with the thread inside MPI. Callbacks take it only if it is free
// (TryGuard) or leave their work to the next thread that holds it (reap_freed).
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

// The mutex only if no other thread holds it (this thread may: it is recursive).
class TryGuard {
 public:
  TryGuard() : lock_(engine_mutex(), std::try_to_lock) {
    if (lock_) ++t_inside;
  }
  ~TryGuard() {
    if (lock_) --t_inside;
  }
  TryGuard(const TryGuard&) = delete;
  TryGuard& operator=(const TryGuard&) = delete;
  explicit operator bool() const { return lock_.owns_lock(); }

 private:
  std::unique_lock<std::recursive_mutex> lock_;
};

}  // namespace cb::preload
