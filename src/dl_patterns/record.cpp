// libcb_record.so: a PMPI interposition library that records an application's
// collectives as collbench traces, one file per rank, written at MPI_Finalize:
//   LD_PRELOAD=.../libcb_record.so CB_RECORD=out.json mpirun -n N app  ->  out.rankR.json
// Each wrapper times the PMPI call it forwards to; nothing else changes for the
// application. See docs/replay.md ("Recording a trace").
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

#include "dl_patterns/record_log.hpp"

#define CB_EXPORT __attribute__((visibility("default")))

namespace {

using cb::Coll;
using cb::Dtype;
using cb::dl::TraceOp;

struct Recorder {
  std::atomic<bool> active{false};  // between MPI_Init and MPI_Finalize, with CB_RECORD set
  std::mutex mu;
  std::string base;
  std::unique_ptr<cb::dl::CallLog> log;
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

void start_recording() {
  Recorder& r = recorder();
  const char* path = std::getenv("CB_RECORD");
  if (!path || !*path) {
    if (world_rank() == 0)
      std::fprintf(stderr, "libcb_record: CB_RECORD is not set: nothing is recorded\n");
    return;
  }
  std::lock_guard lock(r.mu);
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
  r.log.reset();
}

// Predefined types with a collbench equivalent of the same size; others travel as bytes.
std::optional<Dtype> dtype_of(MPI_Datatype t) {
  if (t == MPI_FLOAT) return Dtype::Float;
  if (t == MPI_DOUBLE) return Dtype::Double;
  if (t == MPI_INT || t == MPI_INT32_T || t == MPI_UNSIGNED || t == MPI_UINT32_T)
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

// What one call did, described after it returned (so the lookups are not timed).
struct Call {
  const char* function;
  Coll coll;
  int count;
  MPI_Datatype type;
  MPI_Comm comm;
  MPI_Op op = MPI_OP_NULL;  // reductions only
  int root = 0;             // bcast, reduce only
};

std::optional<TraceOp> describe(const Call& c) {
  TraceOp op;
  op.coll = c.coll;
  op.name = c.function;
  if (c.coll == Coll::Barrier) {  // no data, no size
    PMPI_Comm_size(c.comm, &op.comm_size);
    return op;
  }
  int type_size = 0;
  PMPI_Type_size(c.type, &type_size);
  const std::optional<Dtype> dtype = dtype_of(c.type);
  if (c.count <= 0 || type_size <= 0) return std::nullopt;  // moves no data
  if (dtype && cb::dtype_size(*dtype) == static_cast<size_t>(type_size)) {
    op.dtype = *dtype;
    op.count = static_cast<size_t>(c.count);
  } else {
    char type_name[MPI_MAX_OBJECT_NAME] = "a derived type";
    int length = 0;
    PMPI_Type_get_name(c.type, type_name, &length);
    op.dtype = Dtype::Char;
    op.count = static_cast<size_t>(c.count) * static_cast<size_t>(type_size);
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
  if (!r.active) return pmpi();
  const double begin = now_s();
  const int rc = pmpi();
  const double end = now_s();
  if (rc != MPI_SUCCESS) return rc;
  if (std::optional<TraceOp> op = describe(c)) {
    std::lock_guard lock(r.mu);
    if (r.log) r.log->add(std::move(*op), begin, end);
  }
  return rc;
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
  return recorded({"MPI_Allreduce", Coll::Allreduce, count, type, comm, op},
                  [&] { return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm); });
}

CB_EXPORT int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                             MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return recorded({"MPI_Iallreduce", Coll::Allreduce, count, type, comm, op}, [&] {
    return PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, request);
  });
}

CB_EXPORT int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                         MPI_Op op, int root, MPI_Comm comm) {
  return recorded({"MPI_Reduce", Coll::Reduce, count, type, comm, op, root},
                  [&] { return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm); });
}

CB_EXPORT int MPI_Bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  return recorded({"MPI_Bcast", Coll::Bcast, count, type, comm, MPI_OP_NULL, root},
                  [&] { return PMPI_Bcast(buffer, count, type, root, comm); });
}

CB_EXPORT int MPI_Ibcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm,
                         MPI_Request* request) {
  return recorded({"MPI_Ibcast", Coll::Bcast, count, type, comm, MPI_OP_NULL, root},
                  [&] { return PMPI_Ibcast(buffer, count, type, root, comm, request); });
}

// Alltoall and allgather: the per-peer (contributed) block is the send side, or the
// receive side when the send buffer is MPI_IN_PLACE (its count and type are then ignored).
CB_EXPORT int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const bool in_place = sendbuf == MPI_IN_PLACE;
  return recorded({"MPI_Alltoall", Coll::Alltoall, in_place ? recvcount : sendcount,
                   in_place ? recvtype : sendtype, comm},
                  [&] {
                    return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                         comm);
                  });
}

CB_EXPORT int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request* request) {
  const bool in_place = sendbuf == MPI_IN_PLACE;
  return recorded({"MPI_Ialltoall", Coll::Alltoall, in_place ? recvcount : sendcount,
                   in_place ? recvtype : sendtype, comm},
                  [&] {
                    return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                          recvtype, comm, request);
                  });
}

CB_EXPORT int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const bool in_place = sendbuf == MPI_IN_PLACE;
  return recorded({"MPI_Allgather", Coll::Allgather, in_place ? recvcount : sendcount,
                   in_place ? recvtype : sendtype, comm},
                  [&] {
                    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                          recvtype, comm);
                  });
}

CB_EXPORT int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request* request) {
  const bool in_place = sendbuf == MPI_IN_PLACE;
  return recorded({"MPI_Iallgather", Coll::Allgather, in_place ? recvcount : sendcount,
                   in_place ? recvtype : sendtype, comm},
                  [&] {
                    return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                           recvtype, comm, request);
                  });
}

CB_EXPORT int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                          MPI_Op op, int root, MPI_Comm comm, MPI_Request* request) {
  return recorded({"MPI_Ireduce", Coll::Reduce, count, type, comm, op, root}, [&] {
    return PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, request);
  });
}

// Reduce_scatter_block: the count is each rank's share (recvcount), as collbench's.
CB_EXPORT int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                       MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  return recorded(
      {"MPI_Reduce_scatter_block", Coll::ReduceScatter, recvcount, type, comm, op},
      [&] { return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm); });
}

CB_EXPORT int MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                        MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                                        MPI_Request* request) {
  return recorded(
      {"MPI_Ireduce_scatter_block", Coll::ReduceScatter, recvcount, type, comm, op}, [&] {
        return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm, request);
      });
}

CB_EXPORT int MPI_Barrier(MPI_Comm comm) {
  return recorded({"MPI_Barrier", Coll::Barrier, 0, MPI_DATATYPE_NULL, comm},
                  [&] { return PMPI_Barrier(comm); });
}

CB_EXPORT int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  return recorded({"MPI_Ibarrier", Coll::Barrier, 0, MPI_DATATYPE_NULL, comm},
                  [&] { return PMPI_Ibarrier(comm, request); });
}

// Alltoallv: a trace op has no per-peer counts (each rank knows only its own row), so it is
// recorded as an alltoall of this rank's mean per-peer count, as PARAM's all_to_allv imports.
CB_EXPORT int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  const bool in_place = sendbuf == MPI_IN_PLACE;
  int n = 0;
  PMPI_Comm_size(comm, &n);
  const int* counts = in_place ? recvcounts : sendcounts;
  long long total = 0;
  for (int i = 0; i < n; ++i) total += counts[i];
  const int mean = n > 0 ? static_cast<int>(total / n) : 0;
  return recorded({"MPI_Alltoallv (recorded as alltoall of its mean per-peer count)",
                   Coll::Alltoall, mean, in_place ? recvtype : sendtype, comm},
                  [&] {
                    return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                          recvcounts, rdispls, recvtype, comm);
                  });
}

}  // extern "C"
