// libcb_engine_preload.so: collbench's engine under unmodified MPI programs, through the
// MPI profiling interface (docs/preload.md).
//   LD_PRELOAD=build/libcb_engine_preload.so mpirun -n N ./app
// MPI_Allreduce, MPI_Bcast, MPI_Alltoall, MPI_Reduce, MPI_Allgather,
// MPI_Reduce_scatter_block, MPI_Gather, MPI_Scatter, MPI_Allgatherv, MPI_Barrier and their
// non-blocking forms go to the engine of their communicator when route.hpp says the engine can run
// them; everything else goes to the PMPI_ call unchanged. MPI_Wait*/MPI_Test* advance the
// engine's non-blocking operations while any is in flight. Exceptions never leave these C
// functions.
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "preload/comm_engine.hpp"
#include "preload/guard.hpp"
#include "preload/route.hpp"

#define CB_EXPORT __attribute__((visibility("default")))

namespace cb::preload {
namespace {

// The routed functions, with their MPI-4 large-count forms (`_c`, MPI_Count counts).
// clang-format off
#define CB_ROUTED_FUNCTIONS(X) \
  X(Allreduce) X(Bcast) X(Alltoall) X(Reduce) X(Allgather) X(Reduce_scatter_block) \
  X(Iallreduce) X(Ibcast) X(Ialltoall) X(Ireduce) X(Iallgather) X(Ireduce_scatter_block) \
  X(Gather) X(Scatter) X(Igather) X(Iscatter) X(Allgatherv) X(Iallgatherv)
enum Fn : int {
#define CB_FN(name) k##name, k##name##_c,
  CB_ROUTED_FUNCTIONS(CB_FN)
#undef CB_FN
  kBarrier,
  kIbarrier,
  kFnCount
};
constexpr std::array<const char*, kFnCount> kNames = {
#define CB_NAME(name) "MPI_" #name, "MPI_" #name "_c",
  CB_ROUTED_FUNCTIONS(CB_NAME)
#undef CB_NAME
  "MPI_Barrier",
  "MPI_Ibarrier"};
// clang-format on

// Calls taken and passed through, per function, with the reasons, and their bytes.
struct Counts {
  long engine = 0, passed = 0;
  std::map<std::string, long> reasons;
  unsigned long long engine_bytes = 0, passed_bytes = 0;
};
std::mutex g_stats_mu;
std::array<Counts, kFnCount> g_stats;

struct Signature;
size_t call_bytes(Fn fn, const Signature& sig);
size_t rooted_bytes(bool gather, const Signature& sig);

void count_engine(Fn fn, const Signature& sig) {
  if (!settings().verbose) return;
  const size_t bytes = call_bytes(fn, sig);
  std::lock_guard lock(g_stats_mu);
  ++g_stats[fn].engine;
  g_stats[fn].engine_bytes += bytes;
}
void count_pass(Fn fn, const std::string& reason, const Signature& sig) {
  if (!settings().verbose) return;
  // An invalid handle or count is MPI's to report: no bytes asked of it.
  const bool valid = reason != "invalid communicator" && reason != "invalid datatype" &&
                     reason != "invalid count" && reason != "internal error" &&
                     reason != "MPI_IN_PLACE at a non-root";
  const size_t bytes = valid ? call_bytes(fn, sig) : 0;
  std::lock_guard lock(g_stats_mu);
  ++g_stats[fn].passed;
  ++g_stats[fn].reasons[reason];
  g_stats[fn].passed_bytes += bytes;
}

// The lines of CB_PRELOAD_VERBOSE, to stderr or appended to CB_PRELOAD_LOG (one write
// per line, so that ranks appending to one file do not interleave within a line).
void report() {
  if (!settings().verbose) return;
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int fd = 2;
  if (!settings().log.empty()) {
    fd = open(settings().log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0) {
      std::fprintf(stderr, "cb_engine_preload: cannot open CB_PRELOAD_LOG=%s\n",
                   settings().log.c_str());
      fd = 2;
    }
  }
  std::lock_guard lock(g_stats_mu);
  const std::string head = "cb_engine_preload: rank " + std::to_string(rank) + ": ";
  bool any = false;
  for (int f = 0; f < kFnCount; ++f) {
    const Counts& c = g_stats[static_cast<size_t>(f)];
    if (c.engine + c.passed == 0) continue;
    any = true;
    std::string line = head + kNames[static_cast<size_t>(f)] + ": " + std::to_string(c.engine) +
                       " engine, " + std::to_string(c.passed) + " passed through";
    if (!c.reasons.empty()) {
      line += " (";
      bool first = true;
      for (const auto& [why, n] : c.reasons) {
        line += (first ? "" : ", ") + why + ": " + std::to_string(n);
        first = false;
      }
      line += ")";
    }
    line += "\n";
    if (write(fd, line.data(), line.size()) < 0) break;
  }
  // The bytes of the same calls (call_bytes), per function and in all: the share of this
  // rank's collective data that the engine took.
  unsigned long long engine_bytes = 0, passed_bytes = 0;
  for (int f = 0; f < kFnCount; ++f) {
    const Counts& c = g_stats[static_cast<size_t>(f)];
    if (c.engine_bytes + c.passed_bytes == 0) continue;
    engine_bytes += c.engine_bytes;
    passed_bytes += c.passed_bytes;
    const std::string line = head + "bytes " + kNames[static_cast<size_t>(f)] + ": " +
                             std::to_string(c.engine_bytes) + " engine, " +
                             std::to_string(c.passed_bytes) + " passed through\n";
    if (write(fd, line.data(), line.size()) < 0) break;
  }
  if (engine_bytes + passed_bytes > 0) {
    char share[32];
    std::snprintf(share, sizeof share, "%.1f",
                  100.0 * static_cast<double>(engine_bytes) /
                      static_cast<double>(engine_bytes + passed_bytes));
    const std::string line = head + "bytes in all: " + std::to_string(engine_bytes) + " engine, " +
                             std::to_string(passed_bytes) + " passed through (" + share +
                             " % taken)\n";
    if (write(fd, line.data(), line.size()) < 0) { /* nothing more to do */
    }
  }
  if (!any) {
    const std::string line = head + "no interposed calls\n";
    if (write(fd, line.data(), line.size()) < 0) { /* nothing more to do */
    }
  }
  if (fd != 2) close(fd);
}

// At MPI_Finalize, once: every engine freed before the library's own finalisation, then
// the CB_PRELOAD_VERBOSE lines. From our MPI_Finalize, or from the MPI_COMM_SELF attribute
// (at_finalize) where PMPI_Finalize is called directly.
void finish() {
  static std::once_flag once;
  std::call_once(once, [] {
    try {
      free_all_engines();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cb_engine_preload: MPI_Finalize: freeing the engine: %s\n", e.what());
    }
    report();
  });
}
[[maybe_unused]] const bool g_finish_registered = (at_finalize(finish), true);

// The engine could not be created on this communicator (a bad CB_* setting, say: the same
// on every rank): one line, then the communicator's error handler.
int creation_error(Fn fn, MPI_Comm comm, const char* what) {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "cb_engine_preload: rank %d: %s: cannot start the engine: %s\n", rank,
               kNames[fn], what);
  std::fflush(stderr);
  PMPI_Comm_call_errhandler(comm, MPI_ERR_OTHER);
  return MPI_ERR_OTHER;
}

[[noreturn]] void engine_failed(Fn fn, const char* what) {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "cb_engine_preload: rank %d: %s: engine error: %s; aborting\n", rank,
               kNames[fn], what);
  std::fflush(stderr);
  PMPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

// What a call's decision depends on besides its buffers (route.hpp): two calls of one
// function with equal signatures are decided alike.
struct Signature {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Count count = 0, count2 = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL, type2 = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  int root = 0;
  bool in_place = false;
  // The buffers: not part of the decision, but of the engine's arguments (EngineRoute).
  const void* send = nullptr;
  const void* recv = nullptr;
  bool decided_alike(const Signature& o) const {
    return comm == o.comm && count == o.count && count2 == o.count2 && type == o.type &&
           type2 == o.type2 && op == o.op && root == o.root && in_place == o.in_place;
  }
  bool operator==(const Signature&) const = default;
};

// The signatures of the reductions (root 0 where there is none) and of the exchanges.
Signature reduction_signature(MPI_Comm c, MPI_Count n, MPI_Datatype t, MPI_Op o, int root,
                              const void* s, const void* r) {
  return {.comm = c,
          .count = n,
          .type = t,
          .op = o,
          .root = root,
          .in_place = s == MPI_IN_PLACE,
          .send = s,
          .recv = r};
}
Signature exchange_signature(MPI_Comm c, MPI_Count sn, MPI_Datatype st, MPI_Count rn,
                             MPI_Datatype rt, const void* s, const void* r) {
  return {.comm = c,
          .count = sn,
          .count2 = rn,
          .type = st,
          .type2 = rt,
          .in_place = s == MPI_IN_PLACE,
          .send = s,
          .recv = r};
}

// The bytes of one call on this rank, for CB_PRELOAD_VERBOSE: the data it reduces or moves
// here as its type signature counts them (count x MPI_Type_size, the same for the engine and
// MPI): a reduction's input (reduce_scatter_block's n blocks), a bcast's buffer, the n
// blocks an alltoall or allgather receives, the n blocks a gather's root receives or a
// scatter's root sends (another rank's one block), all blocks of an allgatherv; 0 for a
// barrier. Only asked in verbose mode.
size_t call_bytes(Fn fn, const Signature& sig) {
  if (fn >= kBarrier || sig.comm == MPI_COMM_NULL) return 0;
  const int base = fn & ~1;  // the int form; k<Name>_c follows k<Name>
  if (base == kGather || base == kIgather || base == kScatter || base == kIscatter)
    return rooted_bytes(base == kGather || base == kIgather, sig);
  const bool vform = base == kAllgatherv || base == kIallgatherv;  // count2: all blocks' elements
  const bool exchange =
      base == kAlltoall || base == kAllgather || base == kIalltoall || base == kIallgather;
  const MPI_Count count = exchange || vform ? sig.count2 : sig.count;
  const MPI_Datatype type = exchange || vform ? sig.type2 : sig.type;
  if (count <= 0 || type == MPI_DATATYPE_NULL) return 0;
  int size = 0;
  if (PMPI_Type_size(type, &size) != MPI_SUCCESS || size <= 0) return 0;
  size_t blocks = 1;
  if (exchange || base == kReduce_scatter_block || base == kIreduce_scatter_block) {
    int inter = 0, n = 1;
    PMPI_Comm_test_inter(sig.comm, &inter);
    (inter ? PMPI_Comm_remote_size : PMPI_Comm_size)(sig.comm, &n);
    blocks = static_cast<size_t>(n);
  }
  return blocks * static_cast<size_t>(count) * static_cast<size_t>(size);
}

// A gather's or scatter's bytes (call_bytes): only the root's side of all blocks is
// significant at the root, and only a rank's own block elsewhere (the other side may be
// anything there: never asked). Intercommunicators (roots MPI_ROOT, MPI_PROC_NULL, ...),
// which pass through, are not counted.
size_t rooted_bytes(bool gather, const Signature& sig) {
  int inter = 0, rank = 0, n = 1;
  if (PMPI_Comm_test_inter(sig.comm, &inter) != MPI_SUCCESS || inter) return 0;
  PMPI_Comm_rank(sig.comm, &rank);
  PMPI_Comm_size(sig.comm, &n);
  if (sig.root < 0 || sig.root >= n) return 0;
  const bool at_root = rank == sig.root;
  // Gather: send side (count, type) on every rank, receive side (count2, type2) at the
  // root; scatter the other way round.
  const bool second = gather == at_root;
  const MPI_Count count = second ? sig.count2 : sig.count;
  const MPI_Datatype type = second ? sig.type2 : sig.type;
  int size = 0;
  if (count <= 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS ||
      size <= 0)
    return 0;
  return (at_root ? static_cast<size_t>(n) : 1) * static_cast<size_t>(count) *
         static_cast<size_t>(size);
}

// Per function, the last signature the tuning table handed to the MPI library, per thread.
// A loop of the same call (a benchmark, a training step's buckets) then reaches PMPI after
// one comparison instead of the communicator, type and table queries, which cost about as
// much as the library's whole small collective. Only this reason is remembered: it depends
// on the signature alone, where others (MPI_BOTTOM, say) depend on the buffers, and a rank that
// passed a call through while its peer took the engine would deadlock.
struct TunedPass {
  Signature sig;
  uint64_t generation = 0;  // engines_generation() when remembered; 0: nothing
  CommEngine* engine = nullptr;
};
thread_local std::array<TunedPass, kFnCount> t_tuned;

CommEngine* remembered_pass(Fn fn, const Signature& sig) {
  const TunedPass& t = t_tuned[fn];
  return t.generation == engines_generation() && t.sig.decided_alike(sig) ? t.engine : nullptr;
}

void remember_pass(Fn fn, const Signature& sig, const Route& r, CommEngine* eng) {
  if (eng && r.reason == kTunedToLibrary && !r.derived && !r.counts)
    t_tuned[fn] = {sig, engines_generation(), eng};
}

// Per function, the last call the engine ran, per thread: its arguments, engine and
// algorithm. A call with the same signature and buffers (a benchmark's loop, a training
// step's gradient buckets) is routed alike without asking MPI about its communicator, types
// and attribute again, or the table (most of what routing a small call costs): the route
// depends on those arguments alone (route.cpp), and the choice on arguments equal on every
// rank. Only engine routes of predefined types without packing are remembered (a derived
// type's handle may be freed and reused; Packing's bytes belong to one call), so their
// types and ops are never freed and their communicator has an engine, whose freeing changes the
// generation first (comm_engine.cpp, delete_fn): a remembered route never outlives its
// communicator.
struct EngineRoute {
  Signature sig;
  uint64_t generation = 0;  // 0: nothing
  Route route;
  CommEngine* engine = nullptr;
  const engine::Algorithm* algo = nullptr;
};
thread_local std::array<EngineRoute, kFnCount> t_routed;

// The decision for one call, the engine of its communicator when it routes. Returns
// false with *rc set when the engine could not be created. A blocking call may create the
// engine of a communicator that has none (every rank makes the same call); a non-blocking
// one passes through instead, since starting it must be local.
template <typename Decide>
bool decide(Fn fn, const Signature& sig, bool blocking, Decide&& how, Route& r,
            std::shared_ptr<CommEngine>& eng, CommEngine** routed, const engine::Algorithm** algo,
            int* rc) {
  if (!settings().enabled) {
    r.reason = "CB_ENGINE=off";
    return true;
  }
  const uint64_t generation = engines_generation();
  if (const EngineRoute& m = t_routed[fn]; m.generation == generation && m.sig == sig) {
    r = m.route;
    *routed = m.engine;
    *algo = m.algo;
    return true;
  }
  try {
    r = how();
  } catch (const std::exception& e) {  // bad_alloc: nothing is started yet
    r.reason = "internal error";
    return true;
  }
  if (!r.engine()) return true;
  try {
    eng = engine_of(sig.comm, blocking);
  } catch (const std::exception& e) {
    *rc = creation_error(fn, sig.comm, e.what());
    return false;
  }
  if (!eng) {
    r.reason = "no engine on this communicator yet";
    return true;
  }
  if (std::string why = eng->passes(r.args, algo); !why.empty()) {
    r.reason = why;
    return true;
  }
  *routed = eng.get();
  if (!r.derived && !r.packing && !r.counts) t_routed[fn] = {sig, generation, r, eng.get(), *algo};
  return true;
}

// A blocking call passed through. On a communicator whose engine has run non-blocking
// operations, it is made in its non-blocking PMPI form and waited for here, advancing the
// engine's operations in flight meanwhile: a peer may be waiting for one of them before it
// can enter this collective. The choice must be the same on every rank (MPI never matches
// a blocking collective with a non-blocking one), so it depends on the communicator's
// history, not on what is in flight on this rank. Otherwise the library's blocking call,
// with BlockedProgress advancing operations in flight on other communicators.
template <typename Pass, typename IPass>
int pass_blocking(const CommEngine* eng, Pass&& pass, IPass&& ipass) {
  if (!eng || !eng->started_nonblocking()) {
    BlockedProgress progress;
    return pass();
  }
  MPI_Request req = MPI_REQUEST_NULL;
  int rc = ipass(&req);
  if (rc != MPI_SUCCESS) return rc;
  for (uint64_t polls = 0;;) {
    int done = 0;
    if ((rc = PMPI_Test(&req, &done, MPI_STATUS_IGNORE)) != MPI_SUCCESS || done) return rc;
    progress_all();
    pause(++polls, WaitMode::Spin);
  }
}

// A blocking call: the engine, or PMPI (pass_blocking).
template <typename Decide, typename Pass, typename IPass>
int blocking(Fn fn, const Signature& sig, Decide&& how, Pass&& pass, IPass&& ipass) {
  if (CommEngine* eng = remembered_pass(fn, sig)) {
    count_pass(fn, kTunedToLibrary, sig);
    return pass_blocking(eng, pass, ipass);
  }
  Route r;
  std::shared_ptr<CommEngine> eng;
  CommEngine* routed = nullptr;
  int rc = MPI_SUCCESS;
  const engine::Algorithm* algo = nullptr;
  if (!decide(fn, sig, true, how, r, eng, &routed, &algo, &rc)) return rc;
  if (r.engine()) {
    count_engine(fn, sig);
    try {
      if (r.packing) r.packing->pack(r.args, false);
      routed->run(r.args, *algo);
      if (r.packing) r.packing->unpack();
    } catch (const std::exception& e) {
      engine_failed(fn, e.what());
    }
    return MPI_SUCCESS;
  }
  count_pass(fn, r.reason, sig);
  remember_pass(fn, sig, r, eng.get());
  if (!eng && r.reason != "invalid communicator") {
    try {
      eng = engine_of(sig.comm, false);
    } catch (const std::exception&) {  // no engine: nothing of it to advance
    }
  }
  return pass_blocking(eng.get(), pass, ipass);
}

template <typename Decide, typename IPass>
int nonblocking(Fn fn, const Signature& sig, MPI_Request* request, Decide&& how, IPass&& ipass) {
  if (remembered_pass(fn, sig)) {
    count_pass(fn, kTunedToLibrary, sig);
    return ipass();
  }
  Route r;
  std::shared_ptr<CommEngine> eng;
  CommEngine* routed = nullptr;
  int rc = MPI_SUCCESS;
  const engine::Algorithm* algo = nullptr;
  if (!decide(fn, sig, false, how, r, eng, &routed, &algo, &rc)) return rc;
  if (!r.engine()) {
    count_pass(fn, r.reason, sig);
    remember_pass(fn, sig, r, eng.get());
    return ipass();
  }
  count_engine(fn, sig);
  try {
    if (r.packing) r.packing->pack(r.args, true);
    routed->start(r.args, *algo, kNames[fn], request, r.packing, r.counts);
  } catch (const std::exception& e) {
    engine_failed(fn, e.what());
  }
  return MPI_SUCCESS;
}

// The library's functions for a count type: the int bindings and the MPI-4 large-count
// ones (`_c`), so that one body below serves both.
template <typename C>
struct Lib;
#define CB_LIB(C, SFX, D)                                                                          \
  template <>                                                                                      \
  struct Lib<C> {                                                                                  \
    using Disp = D; /* the displacements' type */                                                  \
    static int allgatherv(const void* s, C sn, MPI_Datatype st, void* r, const C* rn, const D* d,  \
                          MPI_Datatype rt, MPI_Comm c) {                                           \
      return PMPI_Allgatherv##SFX(s, sn, st, r, rn, d, rt, c);                                     \
    }                                                                                              \
    static int iallgatherv(const void* s, C sn, MPI_Datatype st, void* r, const C* rn, const D* d, \
                           MPI_Datatype rt, MPI_Comm c, MPI_Request* q) {                          \
      return PMPI_Iallgatherv##SFX(s, sn, st, r, rn, d, rt, c, q);                                 \
    }                                                                                              \
    static int allreduce(const void* s, void* r, C n, MPI_Datatype t, MPI_Op o, MPI_Comm c) {      \
      return PMPI_Allreduce##SFX(s, r, n, t, o, c);                                                \
    }                                                                                              \
    static int iallreduce(const void* s, void* r, C n, MPI_Datatype t, MPI_Op o, MPI_Comm c,       \
                          MPI_Request* q) {                                                        \
      return PMPI_Iallreduce##SFX(s, r, n, t, o, c, q);                                            \
    }                                                                                              \
    static int reduce(const void* s, void* r, C n, MPI_Datatype t, MPI_Op o, int root,             \
                      MPI_Comm c) {                                                                \
      return PMPI_Reduce##SFX(s, r, n, t, o, root, c);                                             \
    }                                                                                              \
    static int ireduce(const void* s, void* r, C n, MPI_Datatype t, MPI_Op o, int root,            \
                       MPI_Comm c, MPI_Request* q) {                                               \
      return PMPI_Ireduce##SFX(s, r, n, t, o, root, c, q);                                         \
    }                                                                                              \
    static int reduce_scatter_block(const void* s, void* r, C n, MPI_Datatype t, MPI_Op o,         \
                                    MPI_Comm c) {                                                  \
      return PMPI_Reduce_scatter_block##SFX(s, r, n, t, o, c);                                     \
    }                                                                                              \
    static int ireduce_scatter_block(const void* s, void* r, C n, MPI_Datatype t, MPI_Op o,        \
                                     MPI_Comm c, MPI_Request* q) {                                 \
      return PMPI_Ireduce_scatter_block##SFX(s, r, n, t, o, c, q);                                 \
    }                                                                                              \
    static int bcast(void* b, C n, MPI_Datatype t, int root, MPI_Comm c) {                         \
      return PMPI_Bcast##SFX(b, n, t, root, c);                                                    \
    }                                                                                              \
    static int ibcast(void* b, C n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request* q) {        \
      return PMPI_Ibcast##SFX(b, n, t, root, c, q);                                                \
    }                                                                                              \
    static int alltoall(const void* s, C sn, MPI_Datatype st, void* r, C rn, MPI_Datatype rt,      \
                        MPI_Comm c) {                                                              \
      return PMPI_Alltoall##SFX(s, sn, st, r, rn, rt, c);                                          \
    }                                                                                              \
    static int ialltoall(const void* s, C sn, MPI_Datatype st, void* r, C rn, MPI_Datatype rt,     \
                         MPI_Comm c, MPI_Request* q) {                                             \
      return PMPI_Ialltoall##SFX(s, sn, st, r, rn, rt, c, q);                                      \
    }                                                                                              \
    static int allgather(const void* s, C sn, MPI_Datatype st, void* r, C rn, MPI_Datatype rt,     \
                         MPI_Comm c) {                                                             \
      return PMPI_Allgather##SFX(s, sn, st, r, rn, rt, c);                                         \
    }                                                                                              \
    static int iallgather(const void* s, C sn, MPI_Datatype st, void* r, C rn, MPI_Datatype rt,    \
                          MPI_Comm c, MPI_Request* q) {                                            \
      return PMPI_Iallgather##SFX(s, sn, st, r, rn, rt, c, q);                                     \
    }                                                                                              \
    static int gather(const void* s, C sn, MPI_Datatype st, void* r, C rn, MPI_Datatype rt,        \
                      int root, MPI_Comm c) {                                                      \
      return PMPI_Gather##SFX(s, sn, st, r, rn, rt, root, c);                                      \
    }                                                                                              \
    static int igather(const void* s, C sn, MPI_Datatype st, void* r, C rn, MPI_Datatype rt,       \
                       int root, MPI_Comm c, MPI_Request* q) {                                     \
      return PMPI_Igather##SFX(s, sn, st, r, rn, rt, root, c, q);                                  \
    }                                                                                              \
    static int scatter(const void* s, C sn, MPI_Datatype st, void* r, C rn, MPI_Datatype rt,       \
                       int root, MPI_Comm c) {                                                     \
      return PMPI_Scatter##SFX(s, sn, st, r, rn, rt, root, c);                                     \
    }                                                                                              \
    static int iscatter(const void* s, C sn, MPI_Datatype st, void* r, C rn, MPI_Datatype rt,      \
                        int root, MPI_Comm c, MPI_Request* q) {                                    \
      return PMPI_Iscatter##SFX(s, sn, st, r, rn, rt, root, c, q);                                 \
    }                                                                                              \
  };
CB_LIB(int, , int)
#if MPI_VERSION >= 4
CB_LIB(MPI_Count, _c, MPI_Aint)
#endif
#undef CB_LIB

// One body per routed collective, for both count types. `fn` is the interposed function
// (its int or _c form), for the counts of CB_PRELOAD_VERBOSE.
template <typename C>
int allreduce(Fn fn, const void* s, void* r, C n, MPI_Datatype t, MPI_Op o, MPI_Comm c) {
  if (inside_engine()) return Lib<C>::allreduce(s, r, n, t, o, c);
  return blocking(
      fn, reduction_signature(c, n, t, o, 0, s, r),
      [&] { return reduction(Coll::Allreduce, s, r, n, t, o, 0, c); },
      [&] { return Lib<C>::allreduce(s, r, n, t, o, c); },
      [&](MPI_Request* q) { return Lib<C>::iallreduce(s, r, n, t, o, c, q); });
}
template <typename C>
int iallreduce(Fn fn, const void* s, void* r, C n, MPI_Datatype t, MPI_Op o, MPI_Comm c,
               MPI_Request* q) {
  const auto pass = [&] { return Lib<C>::iallreduce(s, r, n, t, o, c, q); };
  if (inside_engine()) return pass();
  return nonblocking(
      fn, reduction_signature(c, n, t, o, 0, s, r), q,
      [&] { return reduction(Coll::Allreduce, s, r, n, t, o, 0, c); }, pass);
}
template <typename C>
int reduce(Fn fn, const void* s, void* r, C n, MPI_Datatype t, MPI_Op o, int root, MPI_Comm c) {
  if (inside_engine()) return Lib<C>::reduce(s, r, n, t, o, root, c);
  return blocking(
      fn, reduction_signature(c, n, t, o, root, s, r),
      [&] { return reduction(Coll::Reduce, s, r, n, t, o, root, c); },
      [&] { return Lib<C>::reduce(s, r, n, t, o, root, c); },
      [&](MPI_Request* q) { return Lib<C>::ireduce(s, r, n, t, o, root, c, q); });
}
template <typename C>
int ireduce(Fn fn, const void* s, void* r, C n, MPI_Datatype t, MPI_Op o, int root, MPI_Comm c,
            MPI_Request* q) {
  const auto pass = [&] { return Lib<C>::ireduce(s, r, n, t, o, root, c, q); };
  if (inside_engine()) return pass();
  return nonblocking(
      fn, reduction_signature(c, n, t, o, root, s, r), q,
      [&] { return reduction(Coll::Reduce, s, r, n, t, o, root, c); }, pass);
}
template <typename C>
int reduce_scatter_block(Fn fn, const void* s, void* r, C n, MPI_Datatype t, MPI_Op o, MPI_Comm c) {
  if (inside_engine()) return Lib<C>::reduce_scatter_block(s, r, n, t, o, c);
  return blocking(
      fn, reduction_signature(c, n, t, o, 0, s, r),
      [&] { return reduction(Coll::ReduceScatter, s, r, n, t, o, 0, c); },
      [&] { return Lib<C>::reduce_scatter_block(s, r, n, t, o, c); },
      [&](MPI_Request* q) { return Lib<C>::ireduce_scatter_block(s, r, n, t, o, c, q); });
}
template <typename C>
int ireduce_scatter_block(Fn fn, const void* s, void* r, C n, MPI_Datatype t, MPI_Op o, MPI_Comm c,
                          MPI_Request* q) {
  const auto pass = [&] { return Lib<C>::ireduce_scatter_block(s, r, n, t, o, c, q); };
  if (inside_engine()) return pass();
  return nonblocking(
      fn, reduction_signature(c, n, t, o, 0, s, r), q,
      [&] { return reduction(Coll::ReduceScatter, s, r, n, t, o, 0, c); }, pass);
}
template <typename C>
int bcast_(Fn fn, void* b, C n, MPI_Datatype t, int root, MPI_Comm c) {
  if (inside_engine()) return Lib<C>::bcast(b, n, t, root, c);
  return blocking(
      fn, Signature{.comm = c, .count = n, .type = t, .root = root, .recv = b},
      [&] { return bcast(b, n, t, root, c); }, [&] { return Lib<C>::bcast(b, n, t, root, c); },
      [&](MPI_Request* q) { return Lib<C>::ibcast(b, n, t, root, c, q); });
}
template <typename C>
int ibcast(Fn fn, void* b, C n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request* q) {
  const auto pass = [&] { return Lib<C>::ibcast(b, n, t, root, c, q); };
  if (inside_engine()) return pass();
  return nonblocking(
      fn, Signature{.comm = c, .count = n, .type = t, .root = root, .recv = b}, q,
      [&] { return bcast(b, n, t, root, c); }, pass);
}
// Alltoall and allgather: `coll` picks which.
template <typename C>
int exchange_(Fn fn, Coll coll, const void* s, C sn, MPI_Datatype st, void* r, C rn,
              MPI_Datatype rt, MPI_Comm c) {
  const auto pass = [&] {
    return coll == Coll::Alltoall ? Lib<C>::alltoall(s, sn, st, r, rn, rt, c)
                                  : Lib<C>::allgather(s, sn, st, r, rn, rt, c);
  };
  if (inside_engine()) return pass();
  return blocking(
      fn, exchange_signature(c, sn, st, rn, rt, s, r),
      [&] { return exchange(coll, s, sn, st, r, rn, rt, c); }, pass,
      [&](MPI_Request* q) {
        return coll == Coll::Alltoall ? Lib<C>::ialltoall(s, sn, st, r, rn, rt, c, q)
                                      : Lib<C>::iallgather(s, sn, st, r, rn, rt, c, q);
      });
}
template <typename C>
int iexchange(Fn fn, Coll coll, const void* s, C sn, MPI_Datatype st, void* r, C rn,
              MPI_Datatype rt, MPI_Comm c, MPI_Request* q) {
  const auto pass = [&] {
    return coll == Coll::Alltoall ? Lib<C>::ialltoall(s, sn, st, r, rn, rt, c, q)
                                  : Lib<C>::iallgather(s, sn, st, r, rn, rt, c, q);
  };
  if (inside_engine()) return pass();
  return nonblocking(
      fn, exchange_signature(c, sn, st, rn, rt, s, r), q,
      [&] { return exchange(coll, s, sn, st, r, rn, rt, c); }, pass);
}

// Gather and scatter: `coll` picks which. MPI_IN_PLACE is the root's: its sendbuf in a
// gather, its recvbuf in a scatter.
template <typename C>
Signature rooted_signature(Coll coll, MPI_Comm c, C sn, MPI_Datatype st, C rn, MPI_Datatype rt,
                           int root, const void* s, const void* r) {
  Signature sig = exchange_signature(c, sn, st, rn, rt, s, r);
  sig.root = root;
  sig.in_place = (coll == Coll::Gather ? s : r) == MPI_IN_PLACE;
  return sig;
}
template <typename C>
int rooted_(Fn fn, Coll coll, const void* s, C sn, MPI_Datatype st, void* r, C rn, MPI_Datatype rt,
            int root, MPI_Comm c) {
  const auto pass = [&] {
    return coll == Coll::Gather ? Lib<C>::gather(s, sn, st, r, rn, rt, root, c)
                                : Lib<C>::scatter(s, sn, st, r, rn, rt, root, c);
  };
  if (inside_engine()) return pass();
  return blocking(
      fn, rooted_signature(coll, c, sn, st, rn, rt, root, s, r),
      [&] {
        return coll == Coll::Gather ? gather(s, sn, st, r, rn, rt, root, c)
                                    : scatter(s, sn, st, r, rn, rt, root, c);
      },
      pass,
      [&](MPI_Request* q) {
        return coll == Coll::Gather ? Lib<C>::igather(s, sn, st, r, rn, rt, root, c, q)
                                    : Lib<C>::iscatter(s, sn, st, r, rn, rt, root, c, q);
      });
}
template <typename C>
int irooted(Fn fn, Coll coll, const void* s, C sn, MPI_Datatype st, void* r, C rn, MPI_Datatype rt,
            int root, MPI_Comm c, MPI_Request* q) {
  const auto pass = [&] {
    return coll == Coll::Gather ? Lib<C>::igather(s, sn, st, r, rn, rt, root, c, q)
                                : Lib<C>::iscatter(s, sn, st, r, rn, rt, root, c, q);
  };
  if (inside_engine()) return pass();
  return nonblocking(
      fn, rooted_signature(coll, c, sn, st, rn, rt, root, s, r), q,
      [&] {
        return coll == Coll::Gather ? gather(s, sn, st, r, rn, rt, root, c)
                                    : scatter(s, sn, st, r, rn, rt, root, c);
      },
      pass);
}

// Allgatherv. Its signature holds the send side and, as count2, the elements of all blocks
// (for CB_PRELOAD_VERBOSE's bytes); its route depends on the count arrays too, so it is
// never remembered (Route::counts).
template <typename C, typename D>
Signature allgatherv_signature(MPI_Comm c, C sn, MPI_Datatype st, const C* rn, MPI_Datatype rt,
                               const void* s, const void* r) {
  MPI_Count all = 0;
  int inter = 1, n = 0;
  if (c != MPI_COMM_NULL && rn && PMPI_Comm_test_inter(c, &inter) == MPI_SUCCESS && !inter &&
      PMPI_Comm_size(c, &n) == MPI_SUCCESS)
    for (int j = 0; j < n; ++j) all += rn[j] > 0 ? static_cast<MPI_Count>(rn[j]) : 0;
  return exchange_signature(c, sn, st, all, rt, s, r);
}
template <typename C, typename D = typename Lib<C>::Disp>
int allgatherv_(Fn fn, const void* s, C sn, MPI_Datatype st, void* r, const C* rn, const D* d,
                MPI_Datatype rt, MPI_Comm c) {
  if (inside_engine()) return Lib<C>::allgatherv(s, sn, st, r, rn, d, rt, c);
  return blocking(
      fn, allgatherv_signature<C, D>(c, sn, st, rn, rt, s, r),
      [&] { return allgatherv<C, D>(s, sn, st, r, rn, d, rt, c); },
      [&] { return Lib<C>::allgatherv(s, sn, st, r, rn, d, rt, c); },
      [&](MPI_Request* q) { return Lib<C>::iallgatherv(s, sn, st, r, rn, d, rt, c, q); });
}
template <typename C, typename D = typename Lib<C>::Disp>
int iallgatherv(Fn fn, const void* s, C sn, MPI_Datatype st, void* r, const C* rn, const D* d,
                MPI_Datatype rt, MPI_Comm c, MPI_Request* q) {
  const auto pass = [&] { return Lib<C>::iallgatherv(s, sn, st, r, rn, d, rt, c, q); };
  if (inside_engine()) return pass();
  return nonblocking(
      fn, allgatherv_signature<C, D>(c, sn, st, rn, rt, s, r), q,
      [&] { return allgatherv<C, D>(s, sn, st, r, rn, d, rt, c); }, pass);
}

}  // namespace
}  // namespace cb::preload

using namespace cb::preload;
using cb::Coll;

// The interposed functions: the int form and, with MPI 4, the large-count form (_c) of each.
#define CB_ROUTED_PAIR(DEFINE) \
  DEFINE(, int)                \
  CB_IF_MPI4(DEFINE(_c, MPI_Count))
#if MPI_VERSION >= 4
#define CB_IF_MPI4(x) x
#else
#define CB_IF_MPI4(x)
#endif

#define CB_ALLREDUCE(SFX, C)                                                                      \
  CB_EXPORT int MPI_Allreduce##SFX(const void* s, void* r, C n, MPI_Datatype t, MPI_Op o,         \
                                   MPI_Comm c) {                                                  \
    return allreduce(kAllreduce##SFX, s, r, n, t, o, c);                                          \
  }                                                                                               \
  CB_EXPORT int MPI_Iallreduce##SFX(const void* s, void* r, C n, MPI_Datatype t, MPI_Op o,        \
                                    MPI_Comm c, MPI_Request* q) {                                 \
    return iallreduce(kIallreduce##SFX, s, r, n, t, o, c, q);                                     \
  }                                                                                               \
  CB_EXPORT int MPI_Reduce##SFX(const void* s, void* r, C n, MPI_Datatype t, MPI_Op o, int root,  \
                                MPI_Comm c) {                                                     \
    return reduce(kReduce##SFX, s, r, n, t, o, root, c);                                          \
  }                                                                                               \
  CB_EXPORT int MPI_Ireduce##SFX(const void* s, void* r, C n, MPI_Datatype t, MPI_Op o, int root, \
                                 MPI_Comm c, MPI_Request* q) {                                    \
    return ireduce(kIreduce##SFX, s, r, n, t, o, root, c, q);                                     \
  }                                                                                               \
  CB_EXPORT int MPI_Reduce_scatter_block##SFX(const void* s, void* r, C n, MPI_Datatype t,        \
                                              MPI_Op o, MPI_Comm c) {                             \
    return reduce_scatter_block(kReduce_scatter_block##SFX, s, r, n, t, o, c);                    \
  }                                                                                               \
  CB_EXPORT int MPI_Ireduce_scatter_block##SFX(const void* s, void* r, C n, MPI_Datatype t,       \
                                               MPI_Op o, MPI_Comm c, MPI_Request* q) {            \
    return ireduce_scatter_block(kIreduce_scatter_block##SFX, s, r, n, t, o, c, q);               \
  }                                                                                               \
  CB_EXPORT int MPI_Bcast##SFX(void* b, C n, MPI_Datatype t, int root, MPI_Comm c) {              \
    return bcast_(kBcast##SFX, b, n, t, root, c);                                                 \
  }                                                                                               \
  CB_EXPORT int MPI_Ibcast##SFX(void* b, C n, MPI_Datatype t, int root, MPI_Comm c,               \
                                MPI_Request* q) {                                                 \
    return ibcast(kIbcast##SFX, b, n, t, root, c, q);                                             \
  }                                                                                               \
  CB_EXPORT int MPI_Alltoall##SFX(const void* s, C sn, MPI_Datatype st, void* r, C rn,            \
                                  MPI_Datatype rt, MPI_Comm c) {                                  \
    return exchange_(kAlltoall##SFX, Coll::Alltoall, s, sn, st, r, rn, rt, c);                    \
  }                                                                                               \
  CB_EXPORT int MPI_Ialltoall##SFX(const void* s, C sn, MPI_Datatype st, void* r, C rn,           \
                                   MPI_Datatype rt, MPI_Comm c, MPI_Request* q) {                 \
    return iexchange(kIalltoall##SFX, Coll::Alltoall, s, sn, st, r, rn, rt, c, q);                \
  }                                                                                               \
  CB_EXPORT int MPI_Allgather##SFX(const void* s, C sn, MPI_Datatype st, void* r, C rn,           \
                                   MPI_Datatype rt, MPI_Comm c) {                                 \
    return exchange_(kAllgather##SFX, Coll::Allgather, s, sn, st, r, rn, rt, c);                  \
  }                                                                                               \
  CB_EXPORT int MPI_Iallgather##SFX(const void* s, C sn, MPI_Datatype st, void* r, C rn,          \
                                    MPI_Datatype rt, MPI_Comm c, MPI_Request* q) {                \
    return iexchange(kIallgather##SFX, Coll::Allgather, s, sn, st, r, rn, rt, c, q);              \
  }

#define CB_GATHER_SCATTER(SFX, C)                                                          \
  CB_EXPORT int MPI_Gather##SFX(const void* s, C sn, MPI_Datatype st, void* r, C rn,       \
                                MPI_Datatype rt, int root, MPI_Comm c) {                   \
    return rooted_(kGather##SFX, Coll::Gather, s, sn, st, r, rn, rt, root, c);             \
  }                                                                                        \
  CB_EXPORT int MPI_Igather##SFX(const void* s, C sn, MPI_Datatype st, void* r, C rn,      \
                                 MPI_Datatype rt, int root, MPI_Comm c, MPI_Request* q) {  \
    return irooted(kIgather##SFX, Coll::Gather, s, sn, st, r, rn, rt, root, c, q);         \
  }                                                                                        \
  CB_EXPORT int MPI_Scatter##SFX(const void* s, C sn, MPI_Datatype st, void* r, C rn,      \
                                 MPI_Datatype rt, int root, MPI_Comm c) {                  \
    return rooted_(kScatter##SFX, Coll::Scatter, s, sn, st, r, rn, rt, root, c);           \
  }                                                                                        \
  CB_EXPORT int MPI_Iscatter##SFX(const void* s, C sn, MPI_Datatype st, void* r, C rn,     \
                                  MPI_Datatype rt, int root, MPI_Comm c, MPI_Request* q) { \
    return irooted(kIscatter##SFX, Coll::Scatter, s, sn, st, r, rn, rt, root, c, q);       \
  }

#define CB_ALLGATHERV(SFX, C, D)                                                                  \
  CB_EXPORT int MPI_Allgatherv##SFX(const void* s, C sn, MPI_Datatype st, void* r, const C rn[],  \
                                    const D d[], MPI_Datatype rt, MPI_Comm c) {                   \
    return allgatherv_(kAllgatherv##SFX, s, sn, st, r, rn, d, rt, c);                             \
  }                                                                                               \
  CB_EXPORT int MPI_Iallgatherv##SFX(const void* s, C sn, MPI_Datatype st, void* r, const C rn[], \
                                     const D d[], MPI_Datatype rt, MPI_Comm c, MPI_Request* q) {  \
    return iallgatherv(kIallgatherv##SFX, s, sn, st, r, rn, d, rt, c, q);                         \
  }

extern "C" {

CB_EXPORT int MPI_Finalize(void) {
  if (!inside_engine()) finish();
  return PMPI_Finalize();
}

CB_ROUTED_PAIR(CB_ALLREDUCE)
CB_ROUTED_PAIR(CB_GATHER_SCATTER)
CB_ALLGATHERV(, int, int)
#if MPI_VERSION >= 4
CB_ALLGATHERV(_c, MPI_Count, MPI_Aint)
#endif

CB_EXPORT int MPI_Barrier(MPI_Comm comm) {
  if (inside_engine()) return PMPI_Barrier(comm);
  return blocking(
      kBarrier, Signature{.comm = comm}, [&] { return barrier(comm); },
      [&] { return PMPI_Barrier(comm); }, [&](MPI_Request* r) { return PMPI_Ibarrier(comm, r); });
}

CB_EXPORT int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  const auto pass = [&] { return PMPI_Ibarrier(comm, request); };
  if (inside_engine()) return pass();
  return nonblocking(
      kIbarrier, Signature{.comm = comm}, request, [&] { return barrier(comm); }, pass);
}

}  // extern "C"
