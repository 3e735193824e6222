// libcb_record.so: a PMPI interposition library that records an application's
// collectives as collbench traces, one file per rank, written at MPI_Finalize:
//   LD_PRELOAD=.../libcb_record.so CB_RECORD=out.json mpirun -n N app  ->  out.rankR.json
// Each wrapper times the PMPI call it forwards to; nothing else changes for the
// application. The MPI-4 large-count bindings (MPI_Allreduce_c ...) are recorded too. See
// docs/replay.md ("Recording a trace").
#include <mpi.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>

#include "dl_patterns/record_log.hpp"

#define CB_EXPORT __attribute__((visibility("default")))

namespace {

using cb::Coll;
using cb::Dtype;
using cb::dl::TraceOp;

struct Recorder {
  std::atomic<bool> started{false};  // start_recording() ran (whether CB_RECORD was set or not)
  std::atomic<bool> active{false};   // from then until MPI_Finalize, with CB_RECORD set
  std::mutex mu;
  std::string base;
  std::unique_ptr<cb::dl::CallLog> log;
  size_t too_large = 0;  // calls over the trace's 1 TiB per operation, not recorded
};

Recorder& recorder() {
  static Recorder r;
  return r;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int world_rank() {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

void finish_recording();

int finish_at_finalize(MPI_Comm, int, void*, void*) {
  finish_recording();
  return MPI_SUCCESS;
}

// At MPI_Init, or at the first recorded call when the program's MPI_Init did not come
// through here: Fortran's mpi_f08 module (MPICH 4.0) calls PMPI_Init, PMPI_Finalize and
// PMPI_Barrier directly, and only its routines with buffers (the collectives here but
// barrier) call the C MPI_ functions. An attribute on MPI_COMM_SELF, deleted at the start
// of PMPI_Finalize with MPI still usable, writes the trace when MPI_Finalize does not.
void start_recording(bool late = false) {
  Recorder& r = recorder();
  std::lock_guard lock(r.mu);
  if (r.started) return;
  int initialized = 0, finalized = 0;
  PMPI_Initialized(&initialized);
  PMPI_Finalized(&finalized);
  if (!initialized || finalized) return;
  r.started = true;
  const int rank = world_rank();
  const char* path = std::getenv("CB_RECORD");
  if (!path || !*path) {
    if (rank == 0)
      std::fprintf(stderr, "libcb_record: CB_RECORD is not set: nothing is recorded\n");
    return;
  }
  int keyval = MPI_KEYVAL_INVALID;
  if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finish_at_finalize, &keyval, nullptr) !=
          MPI_SUCCESS ||
      PMPI_Comm_set_attr(MPI_COMM_SELF, keyval, nullptr) != MPI_SUCCESS)
    std::fprintf(stderr,
                 "libcb_record: rank %d: no MPI_COMM_SELF attribute: only MPI_Finalize "
                 "writes the trace\n",
                 rank);
  if (late && rank == 0)
    std::fprintf(stderr,
                 "libcb_record: MPI_Init did not come through the recorder (a Fortran "
                 "mpi_f08 program?): recording from the first collective\n");
  r.base = path;
  r.log = std::make_unique<cb::dl::CallLog>(now_s());
  r.active = true;
}

void finish_recording() {
  Recorder& r = recorder();
  if (!r.active.exchange(false)) return;
  std::lock_guard lock(r.mu);
  int size = 0;
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  const int rank = world_rank();
  const std::string path = cb::dl::rank_trace_path(r.base, rank);
  try {
    cb::dl::save_trace(r.log->trace(program_invocation_short_name, size), path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "libcb_record: rank %d: %s\n", rank, e.what());
  }
  if (r.log->dropped())
    std::fprintf(stderr, "libcb_record: rank %d: trace limit reached, %zu later calls not kept\n",
                 rank, r.log->dropped());
  if (r.too_large)
    std::fprintf(stderr, "libcb_record: rank %d: %zu calls over 1 TiB not recorded\n", rank,
                 r.too_large);
  r.log.reset();
}

// Predefined types with a collbench equivalent of the same size; others travel as bytes.
std::optional<Dtype> dtype_of(MPI_Datatype t) {
  // describe() checks the sizes: a Fortran INTEGER of 8 bytes travels as bytes, for example.
  if (t == MPI_FLOAT || t == MPI_REAL) return Dtype::Float;
  if (t == MPI_DOUBLE || t == MPI_DOUBLE_PRECISION) return Dtype::Double;
  if (t == MPI_INT || t == MPI_INT32_T || t == MPI_UNSIGNED || t == MPI_UINT32_T ||
      t == MPI_INTEGER)
    return Dtype::Int32;
  if (t == MPI_LONG || t == MPI_LONG_LONG || t == MPI_INT64_T || t == MPI_UNSIGNED_LONG ||
      t == MPI_UNSIGNED_LONG_LONG || t == MPI_UINT64_T)
    return Dtype::Int64;
  if (t == MPI_CHAR || t == MPI_SIGNED_CHAR || t == MPI_UNSIGNED_CHAR || t == MPI_BYTE ||
      t == MPI_INT8_T || t == MPI_UINT8_T || t == MPI_C_BOOL)
    return Dtype::Char;
  return std::nullopt;
}

std::optional<cb::Op> op_of(MPI_Op op) {
  if (op == MPI_SUM) return cb::Op::Sum;
  if (op == MPI_PROD) return cb::Op::Prod;
  if (op == MPI_MAX) return cb::Op::Max;
  if (op == MPI_MIN) return cb::Op::Min;
  return std::nullopt;
}

// What one call did, described after it returned (so the lookups are not timed). `count`
// holds an int count or an MPI_Count (the MPI-4 large-count "_c" bindings) alike.
struct Call {
  const char* function;
  Coll coll;
  long long count;
  MPI_Datatype type;
  MPI_Comm comm;
  MPI_Op op = MPI_OP_NULL;  // reductions only
  int root = 0;             // rooted collectives only
};

// Why a call that moved data is not in the trace: it moved more than the trace format
// holds per operation (cb::dl::kMaxOpBytes, 1 TiB; a trace with such an op could not be
// read back). Counts themselves are 64-bit in the format, so counts above 2^31-1 from the
// "_c" bindings are recorded as any other.
struct TooLarge {
  unsigned long long count, type_size;
};

std::variant<std::monostate, TraceOp, TooLarge> describe(const Call& c) {
  TraceOp op;
  op.coll = c.coll;
  op.name = c.function;
  if (c.coll == Coll::Barrier) {  // no data, no size
    PMPI_Comm_size(c.comm, &op.comm_size);
    return op;
  }
  if (c.count <= 0 || c.type == MPI_DATATYPE_NULL) return std::monostate{};  // moves no data
  int type_size = 0;
  PMPI_Type_size(c.type, &type_size);
  const std::optional<Dtype> dtype = dtype_of(c.type);
  if (type_size <= 0) return std::monostate{};
  const auto count = static_cast<unsigned long long>(c.count);
  const auto size = static_cast<unsigned long long>(type_size);
  if (count > cb::dl::kMaxOpBytes / size) return TooLarge{count, size};
  if (dtype && cb::dtype_size(*dtype) == size) {
    op.dtype = *dtype;
    op.count = count;
  } else {
    char type_name[MPI_MAX_OBJECT_NAME] = "a derived type";
    int length = 0;
    PMPI_Type_get_name(c.type, type_name, &length);
    op.dtype = Dtype::Char;
    op.count = count * size;
    op.name +=
        std::string(" (") + (length > 0 ? type_name : "a derived type") + " recorded as bytes)";
  }
  if (c.op != MPI_OP_NULL) {
    const std::optional<cb::Op> reduction = op_of(c.op);
    op.op = reduction.value_or(cb::Op::Sum);
    if (!reduction) op.name += " (op other than sum/prod/max/min: replayed as sum)";
  }
  op.root = c.root;
  PMPI_Comm_size(c.comm, &op.comm_size);
  return op;
}

// Forwards to `pmpi` and records the call when recording is on.
template <typename Pmpi>
int recorded(const Call& c, Pmpi&& pmpi) {
  Recorder& r = recorder();
  if (!r.started) start_recording(/*late=*/true);
  if (!r.active) return pmpi();
  const double begin = now_s();
  const int rc = pmpi();
  const double end = now_s();
  if (rc != MPI_SUCCESS) return rc;
  auto described = describe(c);
  std::lock_guard lock(r.mu);
  if (!r.log) return rc;
  if (TraceOp* op = std::get_if<TraceOp>(&described)) {
    r.log->add(std::move(*op), begin, end);
  } else if (const TooLarge* big = std::get_if<TooLarge>(&described)) {
    if (r.too_large++ == 0)
      std::fprintf(stderr,
                   "libcb_record: rank %d: %s of %llu elements of %llu bytes: more than a trace "
                   "holds per operation (1 TiB), not recorded (said once; MPI_Finalize counts "
                   "them)\n",
                   world_rank(), c.function, big->count, big->type_size);
  }
  return rc;
}

// One template per collective, shared by its blocking and non-blocking forms (`request`:
// none, or the MPI_Request*) and by its int and MPI_Count ("_c") forms; `pmpi` is the PMPI_
// function of the form called, `name` its MPI_ name.

template <typename Count, typename Pmpi, typename... Request>
int allreduce(const char* name, Pmpi pmpi, const void* sendbuf, void* recvbuf, Count count,
              MPI_Datatype type, MPI_Op op, MPI_Comm comm, Request... request) {
  return recorded({name, Coll::Allreduce, count, type, comm, op},
                  [&] { return pmpi(sendbuf, recvbuf, count, type, op, comm, request...); });
}

template <typename Count, typename Pmpi, typename... Request>
int reduce(const char* name, Pmpi pmpi, const void* sendbuf, void* recvbuf, Count count,
           MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm, Request... request) {
  return recorded({name, Coll::Reduce, count, type, comm, op, root},
                  [&] { return pmpi(sendbuf, recvbuf, count, type, op, root, comm, request...); });
}

template <typename Count, typename Pmpi, typename... Request>
int bcast(const char* name, Pmpi pmpi, void* buffer, Count count, MPI_Datatype type, int root,
          MPI_Comm comm, Request... request) {
  return recorded({name, Coll::Bcast, count, type, comm, MPI_OP_NULL, root},
                  [&] { return pmpi(buffer, count, type, root, comm, request...); });
}

// Alltoall and allgather: the per-peer (contributed) block is the send side, or the
// receive side when the send buffer is MPI_IN_PLACE (its count and type are then ignored).
template <typename Count, typename Pmpi, typename... Request>
int per_peer(const char* name, Coll coll, Pmpi pmpi, const void* sendbuf, Count sendcount,
             MPI_Datatype sendtype, void* recvbuf, Count recvcount, MPI_Datatype recvtype,
             MPI_Comm comm, Request... request) {
  const bool in_place = sendbuf == MPI_IN_PLACE;
  return recorded(
      {name, coll, in_place ? recvcount : sendcount, in_place ? recvtype : sendtype, comm}, [&] {
        return pmpi(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request...);
      });
}

// Reduce_scatter_block: the count is each rank's share (recvcount), as collbench's.
template <typename Count, typename Pmpi, typename... Request>
int reduce_scatter_block(const char* name, Pmpi pmpi, const void* sendbuf, void* recvbuf,
                         Count recvcount, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                         Request... request) {
  return recorded({name, Coll::ReduceScatter, recvcount, type, comm, op},
                  [&] { return pmpi(sendbuf, recvbuf, recvcount, type, op, comm, request...); });
}

// Gather and scatter: the count is a rank's block (gather: its sendcount; scatter: its
// recvcount), or at the root in place the other side's, whose buffer MPI_IN_PLACE replaces.
template <typename Count, typename Pmpi, typename... Request>
int rooted_block(const char* name, Coll coll, Pmpi pmpi, const void* sendbuf, Count sendcount,
                 MPI_Datatype sendtype, void* recvbuf, Count recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm, Request... request) {
  const bool send_side = coll == Coll::Gather ? sendbuf != MPI_IN_PLACE : recvbuf == MPI_IN_PLACE;
  return recorded({name, coll, send_side ? sendcount : recvcount, send_side ? sendtype : recvtype,
                   comm, MPI_OP_NULL, root},
                  [&] {
                    return pmpi(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                                comm, request...);
                  });
}

template <typename Pmpi, typename... Request>
int barrier(const char* name, Pmpi pmpi, MPI_Comm comm, Request... request) {
  return recorded({name, Coll::Barrier, 0, MPI_DATATYPE_NULL, comm},
                  [&] { return pmpi(comm, request...); });
}

// Alltoallv: a trace op has no per-peer counts (each rank knows only its own row), so it is
// recorded as an alltoall of this rank's mean per-peer count, as PARAM's all_to_allv imports.
template <typename Count, typename Displ, typename Pmpi>
int alltoallv(const char* name, Pmpi pmpi, const void* sendbuf, const Count sendcounts[],
              const Displ sdispls[], MPI_Datatype sendtype, void* recvbuf, const Count recvcounts[],
              const Displ rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  const bool in_place = sendbuf == MPI_IN_PLACE;
  int n = 0;
  PMPI_Comm_size(comm, &n);
  const Count* counts = in_place ? recvcounts : sendcounts;
  long long total = 0;
  for (int i = 0; i < n; ++i) total += static_cast<long long>(counts[i]);
  const long long mean = n > 0 ? total / n : 0;
  const std::string described =
      std::string(name) + " (recorded as alltoall of its mean per-peer count)";
  return recorded({described.c_str(), Coll::Alltoall, mean, in_place ? recvtype : sendtype, comm},
                  [&] {
                    return pmpi(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                rdispls, recvtype, comm);
                  });
}

}  // namespace

extern "C" {

CB_EXPORT int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) start_recording();
  return rc;
}

CB_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) start_recording();
  return rc;
}

CB_EXPORT int MPI_Finalize(void) {
  finish_recording();
  return PMPI_Finalize();
}

CB_EXPORT int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                            MPI_Op op, MPI_Comm comm) {
  return allreduce("MPI_Allreduce", PMPI_Allreduce, sendbuf, recvbuf, count, type, op, comm);
}

CB_EXPORT int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                             MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return allreduce("MPI_Iallreduce", PMPI_Iallreduce, sendbuf, recvbuf, count, type, op, comm,
                   request);
}

CB_EXPORT int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                         MPI_Op op, int root, MPI_Comm comm) {
  return reduce("MPI_Reduce", PMPI_Reduce, sendbuf, recvbuf, count, type, op, root, comm);
}

CB_EXPORT int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                          MPI_Op op, int root, MPI_Comm comm, MPI_Request* request) {
  return reduce("MPI_Ireduce", PMPI_Ireduce, sendbuf, recvbuf, count, type, op, root, comm,
                request);
}

CB_EXPORT int MPI_Bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  return bcast("MPI_Bcast", PMPI_Bcast, buffer, count, type, root, comm);
}

CB_EXPORT int MPI_Ibcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm,
                         MPI_Request* request) {
  return bcast("MPI_Ibcast", PMPI_Ibcast, buffer, count, type, root, comm, request);
}

CB_EXPORT int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return per_peer("MPI_Alltoall", Coll::Alltoall, PMPI_Alltoall, sendbuf, sendcount, sendtype,
                  recvbuf, recvcount, recvtype, comm);
}

CB_EXPORT int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request* request) {
  return per_peer("MPI_Ialltoall", Coll::Alltoall, PMPI_Ialltoall, sendbuf, sendcount, sendtype,
                  recvbuf, recvcount, recvtype, comm, request);
}

CB_EXPORT int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return per_peer("MPI_Allgather", Coll::Allgather, PMPI_Allgather, sendbuf, sendcount, sendtype,
                  recvbuf, recvcount, recvtype, comm);
}

CB_EXPORT int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request* request) {
  return per_peer("MPI_Iallgather", Coll::Allgather, PMPI_Iallgather, sendbuf, sendcount, sendtype,
                  recvbuf, recvcount, recvtype, comm, request);
}

CB_EXPORT int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                       MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  return reduce_scatter_block("MPI_Reduce_scatter_block", PMPI_Reduce_scatter_block, sendbuf,
                              recvbuf, recvcount, type, op, comm);
}

CB_EXPORT int MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                        MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                                        MPI_Request* request) {
  return reduce_scatter_block("MPI_Ireduce_scatter_block", PMPI_Ireduce_scatter_block, sendbuf,
                              recvbuf, recvcount, type, op, comm, request);
}

CB_EXPORT int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                         int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return rooted_block("MPI_Gather", Coll::Gather, PMPI_Gather, sendbuf, sendcount, sendtype,
                      recvbuf, recvcount, recvtype, root, comm);
}

CB_EXPORT int MPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                          int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                          MPI_Request* request) {
  return rooted_block("MPI_Igather", Coll::Gather, PMPI_Igather, sendbuf, sendcount, sendtype,
                      recvbuf, recvcount, recvtype, root, comm, request);
}

CB_EXPORT int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                          int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return rooted_block("MPI_Scatter", Coll::Scatter, PMPI_Scatter, sendbuf, sendcount, sendtype,
                      recvbuf, recvcount, recvtype, root, comm);
}

CB_EXPORT int MPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                           MPI_Request* request) {
  return rooted_block("MPI_Iscatter", Coll::Scatter, PMPI_Iscatter, sendbuf, sendcount, sendtype,
                      recvbuf, recvcount, recvtype, root, comm, request);
}

CB_EXPORT int MPI_Barrier(MPI_Comm comm) {
  return barrier("MPI_Barrier", PMPI_Barrier, comm);
}

CB_EXPORT int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  return barrier("MPI_Ibarrier", PMPI_Ibarrier, comm, request);
}

CB_EXPORT int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  return alltoallv("MPI_Alltoallv", PMPI_Alltoallv, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                   recvcounts, rdispls, recvtype, comm);
}

// The MPI-4 large-count bindings (MPI_Count counts, MPI_Aint displacements), which mpi4py 4
// calls, recorded like the int forms under their own names. Barrier has none.
#if MPI_VERSION >= 4

CB_EXPORT int MPI_Allreduce_c(const void* sendbuf, void* recvbuf, MPI_Count count,
                              MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  return allreduce("MPI_Allreduce_c", PMPI_Allreduce_c, sendbuf, recvbuf, count, type, op, comm);
}

CB_EXPORT int MPI_Iallreduce_c(const void* sendbuf, void* recvbuf, MPI_Count count,
                               MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return allreduce("MPI_Iallreduce_c", PMPI_Iallreduce_c, sendbuf, recvbuf, count, type, op, comm,
                   request);
}

CB_EXPORT int MPI_Reduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type,
                           MPI_Op op, int root, MPI_Comm comm) {
  return reduce("MPI_Reduce_c", PMPI_Reduce_c, sendbuf, recvbuf, count, type, op, root, comm);
}

CB_EXPORT int MPI_Ireduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type,
                            MPI_Op op, int root, MPI_Comm comm, MPI_Request* request) {
  return reduce("MPI_Ireduce_c", PMPI_Ireduce_c, sendbuf, recvbuf, count, type, op, root, comm,
                request);
}

CB_EXPORT int MPI_Bcast_c(void* buffer, MPI_Count count, MPI_Datatype type, int root,
                          MPI_Comm comm) {
  return bcast("MPI_Bcast_c", PMPI_Bcast_c, buffer, count, type, root, comm);
}

CB_EXPORT int MPI_Ibcast_c(void* buffer, MPI_Count count, MPI_Datatype type, int root,
                           MPI_Comm comm, MPI_Request* request) {
  return bcast("MPI_Ibcast_c", PMPI_Ibcast_c, buffer, count, type, root, comm, request);
}

CB_EXPORT int MPI_Alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                             void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                             MPI_Comm comm) {
  return per_peer("MPI_Alltoall_c", Coll::Alltoall, PMPI_Alltoall_c, sendbuf, sendcount, sendtype,
                  recvbuf, recvcount, recvtype, comm);
}

CB_EXPORT int MPI_Ialltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm, MPI_Request* request) {
  return per_peer("MPI_Ialltoall_c", Coll::Alltoall, PMPI_Ialltoall_c, sendbuf, sendcount, sendtype,
                  recvbuf, recvcount, recvtype, comm, request);
}

CB_EXPORT int MPI_Allgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm) {
  return per_peer("MPI_Allgather_c", Coll::Allgather, PMPI_Allgather_c, sendbuf, sendcount,
                  sendtype, recvbuf, recvcount, recvtype, comm);
}

CB_EXPORT int MPI_Iallgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                               void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                               MPI_Comm comm, MPI_Request* request) {
  return per_peer("MPI_Iallgather_c", Coll::Allgather, PMPI_Iallgather_c, sendbuf, sendcount,
                  sendtype, recvbuf, recvcount, recvtype, comm, request);
}

CB_EXPORT int MPI_Reduce_scatter_block_c(const void* sendbuf, void* recvbuf, MPI_Count recvcount,
                                         MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  return reduce_scatter_block("MPI_Reduce_scatter_block_c", PMPI_Reduce_scatter_block_c, sendbuf,
                              recvbuf, recvcount, type, op, comm);
}

CB_EXPORT int MPI_Ireduce_scatter_block_c(const void* sendbuf, void* recvbuf, MPI_Count recvcount,
                                          MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                                          MPI_Request* request) {
  return reduce_scatter_block("MPI_Ireduce_scatter_block_c", PMPI_Ireduce_scatter_block_c, sendbuf,
                              recvbuf, recvcount, type, op, comm, request);
}

CB_EXPORT int MPI_Alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[],
                              const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                              const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                              MPI_Datatype recvtype, MPI_Comm comm) {
  return alltoallv("MPI_Alltoallv_c", PMPI_Alltoallv_c, sendbuf, sendcounts, sdispls, sendtype,
                   recvbuf, recvcounts, rdispls, recvtype, comm);
}

#endif  // MPI_VERSION >= 4

}  // extern "C"
