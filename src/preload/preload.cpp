// libcb_engine_preload.so: collbench's engine under unmodified MPI programs, through the
// MPI profiling interface (docs/preload.md).
//   LD_PRELOAD=build/libcb_engine_preload.so mpirun -n N ./app
// MPI_Allreduce, MPI_Bcast, MPI_Alltoall, MPI_Reduce, MPI_Allgather,
// MPI_Reduce_scatter_block, MPI_Barrier and their non-blocking forms go to the engine of
// their communicator when route.hpp says the engine can run them; everything else goes
// to the PMPI_ call unchanged. MPI_Wait*/MPI_Test* advance the engine's non-blocking
// operations while any is in flight. Exceptions never leave these C functions.
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

enum Fn : int {
  kAllreduce,
  kBcast,
  kAlltoall,
  kReduce,
  kAllgather,
  kReduceScatterBlock,
  kBarrier,
  kIallreduce,
  kIbcast,
  kIalltoall,
  kIreduce,
  kIallgather,
  kIreduceScatterBlock,
  kIbarrier,
  kFnCount
};
constexpr std::array<const char*, kFnCount> kNames = {"MPI_Allreduce",
                                                      "MPI_Bcast",
                                                      "MPI_Alltoall",
                                                      "MPI_Reduce",
                                                      "MPI_Allgather",
                                                      "MPI_Reduce_scatter_block",
                                                      "MPI_Barrier",
                                                      "MPI_Iallreduce",
                                                      "MPI_Ibcast",
                                                      "MPI_Ialltoall",
                                                      "MPI_Ireduce",
                                                      "MPI_Iallgather",
                                                      "MPI_Ireduce_scatter_block",
                                                      "MPI_Ibarrier"};

// Calls taken and passed through, per function, with the reasons.
struct Counts {
  long engine = 0, passed = 0;
  std::map<std::string, long> reasons;
};
std::mutex g_stats_mu;
std::array<Counts, kFnCount> g_stats;

void count_engine(Fn fn) {
  if (!settings().verbose) return;
  std::lock_guard lock(g_stats_mu);
  ++g_stats[fn].engine;
}
void count_pass(Fn fn, const std::string& reason) {
  if (!settings().verbose) return;
  std::lock_guard lock(g_stats_mu);
  ++g_stats[fn].passed;
  ++g_stats[fn].reasons[reason];
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
  if (!any) {
    const std::string line = head + "no interposed calls\n";
    if (write(fd, line.data(), line.size()) < 0) { /* nothing more to do */
    }
  }
  if (fd != 2) close(fd);
}

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
  int count = 0, count2 = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL, type2 = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  int root = 0;
  bool in_place = false;
  bool operator==(const Signature&) const = default;
};

// Per function, the last signature the tuning table handed to the MPI library, per thread.
// A loop of the same call (a benchmark, a training step's buckets) then reaches PMPI after
// one comparison instead of the communicator, type and table queries (~0.15 us, as much
// as MPICH's whole small bcast here). Only this reason is remembered: it depends on the
// signature alone, where others (MPI_BOTTOM, say) depend on the buffers, and a rank that
// passed a call through while its peer took the engine would deadlock.
struct TunedPass {
  Signature sig;
  uint64_t generation = 0;  // engines_generation() when remembered; 0: nothing
  CommEngine* engine = nullptr;
};
thread_local std::array<TunedPass, kFnCount> t_tuned;

CommEngine* remembered_pass(Fn fn, const Signature& sig) {
  const TunedPass& t = t_tuned[fn];
  return t.generation == engines_generation() && t.sig == sig ? t.engine : nullptr;
}

void remember_pass(Fn fn, const Signature& sig, const Route& r, CommEngine* eng) {
  if (eng && r.reason == kTunedToLibrary) t_tuned[fn] = {sig, engines_generation(), eng};
}

// The decision for one call, the engine of its communicator when it routes. Returns
// false with *rc set when the engine could not be created.
template <typename Decide>
bool decide(Fn fn, MPI_Comm comm, Decide&& how, Route& r, std::shared_ptr<CommEngine>& eng,
            int* rc) {
  if (!settings().enabled) {
    r.reason = "CB_ENGINE=off";
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
    eng = engine_of(comm);
  } catch (const std::exception& e) {
    *rc = creation_error(fn, comm, e.what());
    return false;
  }
  if (std::string why = eng->passes(r.args); !why.empty()) r.reason = why;
  return true;
}

// A blocking call passed through. On a communicator whose engine has run non-blocking
// operations, it is made in its non-blocking PMPI form and waited for here, advancing the
// engine's operations in flight meanwhile: a peer may be waiting for one of them before it
// can enter this collective. The choice must be the same on every rank (MPI never matches
// a blocking collective with a non-blocking one), so it depends on the communicator's
// history, not on what is in flight on this rank. (Operations in flight on other
// communicators are not covered: docs/preload.md.)
template <typename Pass, typename IPass>
int pass_blocking(const CommEngine* eng, Pass&& pass, IPass&& ipass) {
  if (!eng || !eng->started_nonblocking()) return pass();
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
    count_pass(fn, kTunedToLibrary);
    return pass_blocking(eng, pass, ipass);
  }
  Route r;
  std::shared_ptr<CommEngine> eng;
  int rc = MPI_SUCCESS;
  if (!decide(fn, sig.comm, how, r, eng, &rc)) return rc;
  if (r.engine()) {
    count_engine(fn);
    try {
      eng->run(r.args);
    } catch (const std::exception& e) {
      engine_failed(fn, e.what());
    }
    return MPI_SUCCESS;
  }
  count_pass(fn, r.reason);
  remember_pass(fn, sig, r, eng.get());
  if (!eng && r.reason != "invalid communicator") eng = existing_engine(sig.comm);
  return pass_blocking(eng.get(), pass, ipass);
}

template <typename Decide, typename IPass>
int nonblocking(Fn fn, const Signature& sig, MPI_Request* request, Decide&& how, IPass&& ipass) {
  if (remembered_pass(fn, sig)) {
    count_pass(fn, kTunedToLibrary);
    return ipass();
  }
  Route r;
  std::shared_ptr<CommEngine> eng;
  int rc = MPI_SUCCESS;
  if (!decide(fn, sig.comm, how, r, eng, &rc)) return rc;
  if (!r.engine()) {
    count_pass(fn, r.reason);
    remember_pass(fn, sig, r, eng.get());
    return ipass();
  }
  count_engine(fn);
  try {
    eng->start(r.args, kNames[fn], request);
  } catch (const std::exception& e) {
    engine_failed(fn, e.what());
  }
  return MPI_SUCCESS;
}

}  // namespace
}  // namespace cb::preload

using namespace cb::preload;
using cb::Coll;

extern "C" {

CB_EXPORT int MPI_Finalize(void) {
  if (!inside_engine()) {
    try {
      free_all_engines();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cb_engine_preload: MPI_Finalize: freeing the engine: %s\n", e.what());
    }
    report();
  }
  return PMPI_Finalize();
}

CB_EXPORT int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                            MPI_Op op, MPI_Comm comm) {
  if (inside_engine()) return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
  return blocking(
      kAllreduce,
      Signature{.comm = comm,
                .count = count,
                .type = type,
                .op = op,
                .in_place = sendbuf == MPI_IN_PLACE},
      [&] { return reduction(Coll::Allreduce, sendbuf, recvbuf, count, type, op, 0, comm); },
      [&] { return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm); },
      [&](MPI_Request* r) { return PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, r); });
}

CB_EXPORT int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                             MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  const auto pass = [&] {
    return PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, request);
  };
  if (inside_engine()) return pass();
  return nonblocking(
      kIallreduce,
      Signature{.comm = comm,
                .count = count,
                .type = type,
                .op = op,
                .in_place = sendbuf == MPI_IN_PLACE},
      request,
      [&] { return reduction(Coll::Allreduce, sendbuf, recvbuf, count, type, op, 0, comm); }, pass);
}

CB_EXPORT int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                         MPI_Op op, int root, MPI_Comm comm) {
  if (inside_engine()) return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
  return blocking(
      kReduce,
      Signature{.comm = comm,
                .count = count,
                .type = type,
                .op = op,
                .root = root,
                .in_place = sendbuf == MPI_IN_PLACE},
      [&] { return reduction(Coll::Reduce, sendbuf, recvbuf, count, type, op, root, comm); },
      [&] { return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm); },
      [&](MPI_Request* r) {
        return PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, r);
      });
}

CB_EXPORT int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                          MPI_Op op, int root, MPI_Comm comm, MPI_Request* request) {
  const auto pass = [&] {
    return PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, request);
  };
  if (inside_engine()) return pass();
  return nonblocking(
      kIreduce,
      Signature{.comm = comm,
                .count = count,
                .type = type,
                .op = op,
                .root = root,
                .in_place = sendbuf == MPI_IN_PLACE},
      request,
      [&] { return reduction(Coll::Reduce, sendbuf, recvbuf, count, type, op, root, comm); }, pass);
}

CB_EXPORT int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                       MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  if (inside_engine())
    return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
  return blocking(
      kReduceScatterBlock,
      Signature{.comm = comm,
                .count = recvcount,
                .type = type,
                .op = op,
                .in_place = sendbuf == MPI_IN_PLACE},
      [&] {
        return reduction(Coll::ReduceScatter, sendbuf, recvbuf, recvcount, type, op, 0, comm);
      },
      [&] { return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm); },
      [&](MPI_Request* r) {
        return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm, r);
      });
}

CB_EXPORT int MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                        MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                                        MPI_Request* request) {
  const auto pass = [&] {
    return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm, request);
  };
  if (inside_engine()) return pass();
  return nonblocking(
      kIreduceScatterBlock,
      Signature{.comm = comm,
                .count = recvcount,
                .type = type,
                .op = op,
                .in_place = sendbuf == MPI_IN_PLACE},
      request,
      [&] {
        return reduction(Coll::ReduceScatter, sendbuf, recvbuf, recvcount, type, op, 0, comm);
      },
      pass);
}

CB_EXPORT int MPI_Bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  if (inside_engine()) return PMPI_Bcast(buffer, count, type, root, comm);
  return blocking(
      kBcast, Signature{.comm = comm, .count = count, .type = type, .root = root},
      [&] { return bcast(buffer, count, type, root, comm); },
      [&] { return PMPI_Bcast(buffer, count, type, root, comm); },
      [&](MPI_Request* r) { return PMPI_Ibcast(buffer, count, type, root, comm, r); });
}

CB_EXPORT int MPI_Ibcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm,
                         MPI_Request* request) {
  const auto pass = [&] { return PMPI_Ibcast(buffer, count, type, root, comm, request); };
  if (inside_engine()) return pass();
  return nonblocking(
      kIbcast, Signature{.comm = comm, .count = count, .type = type, .root = root}, request,
      [&] { return bcast(buffer, count, type, root, comm); }, pass);
}

CB_EXPORT int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const auto pass = [&] {
    return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  };
  if (inside_engine()) return pass();
  return blocking(
      kAlltoall,
      Signature{.comm = comm,
                .count = sendcount,
                .count2 = recvcount,
                .type = sendtype,
                .type2 = recvtype,
                .in_place = sendbuf == MPI_IN_PLACE},
      [&] {
        return exchange(Coll::Alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                        comm);
      },
      pass,
      [&](MPI_Request* r) {
        return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, r);
      });
}

CB_EXPORT int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request* request) {
  const auto pass = [&] {
    return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                          request);
  };
  if (inside_engine()) return pass();
  return nonblocking(
      kIalltoall,
      Signature{.comm = comm,
                .count = sendcount,
                .count2 = recvcount,
                .type = sendtype,
                .type2 = recvtype,
                .in_place = sendbuf == MPI_IN_PLACE},
      request,
      [&] {
        return exchange(Coll::Alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                        comm);
      },
      pass);
}

CB_EXPORT int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const auto pass = [&] {
    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  };
  if (inside_engine()) return pass();
  return blocking(
      kAllgather,
      Signature{.comm = comm,
                .count = sendcount,
                .count2 = recvcount,
                .type = sendtype,
                .type2 = recvtype,
                .in_place = sendbuf == MPI_IN_PLACE},
      [&] {
        return exchange(Coll::Allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                        comm);
      },
      pass,
      [&](MPI_Request* r) {
        return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, r);
      });
}

CB_EXPORT int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request* request) {
  const auto pass = [&] {
    return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                           request);
  };
  if (inside_engine()) return pass();
  return nonblocking(
      kIallgather,
      Signature{.comm = comm,
                .count = sendcount,
                .count2 = recvcount,
                .type = sendtype,
                .type2 = recvtype,
                .in_place = sendbuf == MPI_IN_PLACE},
      request,
      [&] {
        return exchange(Coll::Allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                        comm);
      },
      pass);
}

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

// Waits and tests: while engine operations are in flight a wait becomes a loop of tests
// that advances them too (MPICH's own progress loop does not call back into the engine),
// and a test advances them once first. Otherwise MPI's functions, unchanged.
}  // extern "C"
namespace {
bool engine_busy() {
  return !inside_engine() && operations_in_flight() > 0;
}
template <typename Test>
int wait_testing(Test&& test) {
  for (uint64_t polls = 0;;) {
    bool done = false;
    if (const int rc = test(&done); rc != MPI_SUCCESS || done) return rc;
    progress_all();
    pause(++polls, cb::WaitMode::Spin);
  }
}
}  // namespace
extern "C" {

CB_EXPORT int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  if (!engine_busy()) return PMPI_Wait(request, status);
  return wait_testing([&](bool* done) {
    int flag = 0;
    const int rc = PMPI_Test(request, &flag, status);
    *done = flag != 0;
    return rc;
  });
}

CB_EXPORT int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (!engine_busy()) return PMPI_Waitall(count, requests, statuses);
  return wait_testing([&](bool* done) {
    int flag = 0;
    const int rc = PMPI_Testall(count, requests, &flag, statuses);
    *done = flag != 0;
    return rc;
  });
}

CB_EXPORT int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  if (!engine_busy()) return PMPI_Waitany(count, requests, index, status);
  return wait_testing([&](bool* done) {
    int flag = 0;
    const int rc = PMPI_Testany(count, requests, index, &flag, status);
    *done = flag != 0;
    return rc;
  });
}

CB_EXPORT int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                           MPI_Status statuses[]) {
  if (!engine_busy()) return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
  return wait_testing([&](bool* done) {
    const int rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);
    *done = *outcount != 0;  // some completed, or MPI_UNDEFINED: none active
    return rc;
  });
}

CB_EXPORT int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  if (engine_busy()) progress_all();
  return PMPI_Test(request, flag, status);
}

CB_EXPORT int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  if (engine_busy()) progress_all();
  return PMPI_Testall(count, requests, flag, statuses);
}

CB_EXPORT int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag,
                          MPI_Status* status) {
  if (engine_busy()) progress_all();
  return PMPI_Testany(count, requests, index, flag, status);
}

CB_EXPORT int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                           MPI_Status statuses[]) {
  if (engine_busy()) progress_all();
  return PMPI_Testsome(incount, requests, outcount, indices, statuses);
}

}  // extern "C"
