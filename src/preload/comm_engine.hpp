// The engine behind one application communicator, for libcb_engine_preload.so: the same
// pieces --backend engine uses (engine::Comm on its own duplicate of the communicator, the
// tuning table, CB_<COLL>_ALGO, HostExecutor, Schedule and Execution), but on the
// application's communicator instead of MPI_COMM_WORLD. Non-blocking operations are
// generalized requests: MPICH's extended ones (MPIX_Grequest_start) whose poll function
// advances them, or elsewhere (Open MPI, the standard ABI) standard ones (MPI_Grequest_start)
// that the preload's MPI_Wait*/MPI_Test* wrappers advance (core/mpi_compat.hpp).
//
// Every function here runs with the "inside the engine" guard set (preload_guard.hpp), so
// the MPI calls the engine makes itself go straight to PMPI.
#pragma once

#include <mpi.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/args.hpp"
#include "engine/comm.hpp"
#include "engine/executor.hpp"
#include "engine/group.hpp"
#include "engine/schedule.hpp"
#include "engine/select.hpp"
#include "preload/route.hpp"

namespace cb::preload {

// Settings from the environment, read once (see docs/preload.md).
struct Settings {
  bool enabled = true;   // CB_ENGINE=off: every call passes through
  bool verbose = false;  // CB_PRELOAD_VERBOSE=1: counts at MPI_Finalize
  std::string log;       // CB_PRELOAD_LOG=FILE: verbose lines appended there, not stderr
  int wait = -1;         // CB_PRELOAD_WAIT: -1 auto, 0 spin, 1 yield
  bool eager = false;    // CB_PRELOAD_ENGINES=eager: every constructor makes its engine
  // CB_PRELOAD_PROGRESS=thread: a progress thread that calls MPI (enable_progress_thread)
  bool progress_thread = false;
};
const Settings& settings();

// The reason a call goes to PMPI because the tuning table hands its size to the library;
// the only one preload.cpp remembers per call signature.
inline constexpr const char* kTunedToLibrary = "tuned to the MPI library";

class CommEngine : public std::enable_shared_from_this<CommEngine> {
 public:
  // Collective over `comm` (create_engine).
  explicit CommEngine(MPI_Comm comm);
  CommEngine(const CommEngine&) = delete;
  CommEngine& operator=(const CommEngine&) = delete;

  // Why `args` go to PMPI instead of the engine (empty: the engine runs them): no engine
  // algorithm can run them ("engine refuses"), or the chosen one is the MPI library's own
  // (kTunedToLibrary). Depends only on arguments that match across ranks, the
  // communicator and the environment: the same on every rank. When the engine runs them,
  // *chosen (if given) is the algorithm, for run() or start() (chosen once per call).
  std::string passes(const CollArgs& args, const engine::Algorithm** chosen = nullptr) const;
  // Runs `args` with `algo` to completion, advancing the process's non-blocking operations
  // meanwhile.
  void run(const CollArgs& args, const engine::Algorithm& algo);
  // Starts `args` with `algo` as a generalized request in *request; `packing` (route.hpp,
  // already packed) is unpacked when the operation completes, before the request does;
  // `counts` (args.counts, a v-form's blocks) lives as long as the operation.
  void start(const CollArgs& args, const engine::Algorithm& algo, const char* function,
             MPI_Request* request, std::shared_ptr<Packing> packing = nullptr,
             std::shared_ptr<const CountMatrix> counts = nullptr);

  engine::Comm& comm() { return comm_; }
  // Whether a non-blocking operation ever ran on this engine: the same on every rank of
  // the communicator (each makes the same routed calls), unlike "one is in flight now".
  // Read without the engine mutex (pass_blocking): atomic.
  bool started_nonblocking() const { return started_nonblocking_.load(std::memory_order_relaxed); }

 private:
  friend class NbOp;
  const engine::Algorithm* choose(const CollArgs& a, std::string* why) const;
  engine::Comm comm_;
  engine::Group world_;
  engine::HostExecutor host_;
  engine::Schedule blocking_;
  std::map<Coll, std::vector<engine::Rule>> pruned_;  // the tuning table's rules for this size
  std::atomic<bool> started_nonblocking_{false};
};

// Creates the engine of `comm` (collective over comm; no lock held, so threads creating
// engines of different communicators never wait for each other): at MPI_Init for
// MPI_COMM_WORLD, at a communicator's first routed blocking collective (engine_of, where
// every rank of comm makes the same call), or with CB_PRELOAD_ENGINES=eager where the
// communicator is made (MPI_Comm_dup, MPI_Comm_split, ...). While it blocks, the engine
// operations in flight on other communicators advance (BlockedProgress). A failure is
// remembered and reported by engine_of. Cached in an attribute that MPI_Comm_free and
// MPI_Finalize delete.
void create_engine(MPI_Comm comm);
// The engine of `comm`; without one, null, or with `create` (a blocking collective, where
// every rank of comm makes the same call) made now.
// Throws the creation's error.
std::shared_ptr<CommEngine> engine_of(MPI_Comm comm, bool create);
// Changes whenever an engine is freed (with its communicator, whose handle MPI may give to
// a new one): what was remembered about a communicator is stale once it changes.
uint64_t engines_generation();
// Frees the engines of every communicator still alive (before PMPI_Finalize).
void free_all_engines();
// `fn` runs at the start of PMPI_Finalize (an attribute of MPI_COMM_SELF, set with the first
// engine), even when the application's MPI_Finalize bypasses the library's.
void at_finalize(void (*fn)());
// Advances every non-blocking engine operation of this process once; true if any is left.
bool progress_all();
// The same from MPI's callbacks (guard.hpp's lock order): only if no other thread holds the
// engine mutex; false when one does (nothing advanced).
bool progress_all_if_free();
// Non-blocking engine operations in flight in this process (no lock taken).
size_t operations_in_flight();
// Around a blocking MPI call that does not advance the engine (a collective passed to the
// library, MPI_Recv, MPI_Comm_dup, ...): while it lasts, a background thread advances the
// engine operations in flight whose progress needs no MPI call (all of them on a
// communicator within one node), as MPI's progress rule asks: a rank blocked in one call
// must not stall a peer waiting for one of its pending operations. Costs one atomic load
// when nothing is in flight.
class BlockedProgress {
 public:
  BlockedProgress();
  ~BlockedProgress();
  BlockedProgress(const BlockedProgress&) = delete;
  BlockedProgress& operator=(const BlockedProgress&) = delete;

 private:
  bool active_ = false;
};
// MPI_Init and MPI_Init_thread (`required` < 0: MPI_Init). With CB_PRELOAD_PROGRESS=thread
// the library is asked for MPI_THREAD_MULTIPLE, the program told the level it asked for
// (never more than provided; MPI_Query_thread too), and the progress thread enabled where
// MULTIPLE is provided; otherwise PMPI_Init or PMPI_Init_thread unchanged
// (preload_blocking.cpp).
int init_mpi(int* argc, char*** argv, int required, int* provided);
// CB_PRELOAD_PROGRESS=thread with MPI_THREAD_MULTIPLE: BlockedProgress's background thread
// advances every engine operation in flight (calling MPI: those spanning nodes too) and
// completes them, while a thread blocks in MPI and, more slowly, whenever one is in
// flight. Set once, at MPI_Init; MPI_Finalize clears it before the engines are freed.
void enable_progress_thread();
bool progress_thread_enabled();
// Lets MPI progress its own operations (MPI_Test of a request that never completes):
// called now and then while this rank waits inside the engine, so that a peer waiting
// for one of our passed-through operations is not starved.
void poke_mpi();
// Called on every unsuccessful poll while waiting.
void pause(uint64_t polls, WaitMode mode);

}  // namespace cb::preload
